import { isJobId, roleAtLeast, type AttemptRow } from '@fenceline/core';
import { principalOf } from './session';
import { consoleStore } from './store';

/**
 * The download of one attempt's whole log (GET /api/jobs/:jobId/attempts/:fence/logs). It
 * is a plain response rather than a tRPC query so the browser saves it as a file, and it
 * asks what tRPC's viewer procedures ask: a live session or API token, with the viewer
 * role at least. A job or fence that names no attempt is a 404 with no detail.
 */
export async function attemptLogsResponse(req: Request, params: { jobId: string; fence: string }): Promise<Response> {
  const { principal } = await principalOf(req.headers);
  if (principal === null)
    return Response.json({ error: { code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: sign in, or send an API token as Authorization: Bearer' } }, { status: 401 });
  if (!roleAtLeast(principal.role, 'viewer')) return Response.json({ error: { code: 'FORBIDDEN', message: 'FORBIDDEN: this needs the viewer role' } }, { status: 403 });
  const attempt = await findAttempt(params);
  if (attempt === null)
    return Response.json({ error: { code: 'NOT_FOUND', message: `NOT_FOUND: job ${params.jobId} has no attempt under fence ${params.fence}` } }, { status: 404 });
  return new Response(attempt.logs ?? '', {
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'content-disposition': `attachment; filename="job-${attempt.jobId}-attempt-${attempt.attempt}-fence-${attempt.fence}.log"`,
      'cache-control': 'no-store',
    },
  });
}

async function findAttempt(params: { jobId: string; fence: string }): Promise<AttemptRow | null> {
  if (!isJobId(params.jobId) || !/^[1-9][0-9]{0,17}$/.test(params.fence)) return null;
  const fence = Number(params.fence);
  const attempts = await (await consoleStore()).listAttempts(params.jobId);
  return attempts.find((a) => a.fence === fence) ?? null;
}
