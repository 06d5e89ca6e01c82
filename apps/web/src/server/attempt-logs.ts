import { isJobId, LOG_CHUNKS_MAX_LIMIT, roleAtLeast } from '@fenceline/core';
import { type AttemptRow } from '@fenceline/core/store';
import { principalOf } from './session';
import { consoleStore } from './store';

/**
 * The download of one attempt's whole log (GET /api/jobs/:jobId/attempts/:fence/logs). It
 * is a plain response rather than a tRPC query so the browser saves it as a file, and it
 * asks what tRPC's viewer procedures ask: a live session or API token, with the viewer
 * role at least. A job or fence that names no attempt is a 404 with no detail. A running
 * attempt's download is what it has streamed so far.
 */
export async function attemptLogsResponse(req: Request, params: { jobId: string; fence: string }): Promise<Response> {
  const { principal } = await principalOf(req.headers);
  if (principal === null)
    return Response.json({ error: { code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: sign in, or send an API token as Authorization: Bearer' } }, { status: 401 });
  if (!roleAtLeast(principal.role, 'viewer')) return Response.json({ error: { code: 'FORBIDDEN', message: 'FORBIDDEN: this needs the viewer role' } }, { status: 403 });
  const log = await findLog(params);
  if (log === null) return Response.json({ error: { code: 'NOT_FOUND', message: `NOT_FOUND: job ${params.jobId} has no attempt under fence ${params.fence}` } }, { status: 404 });
  return new Response(log.text, {
    headers: {
      'content-type': 'text/plain; charset=utf-8',
      'content-disposition': `attachment; filename="${log.name}"`,
      'cache-control': 'no-store',
    },
  });
}

/**
 * The attempt's whole log: its result's when it wrote one, else what it has streamed so far
 * (an attempt still running, or one whose lease ran out before it wrote a result). The file
 * is named by the attempt's fence, which no other attempt shares: the attempt's budget
 * number repeats after a clear, and its number in the job's life is the console's reading.
 */
async function findLog(params: { jobId: string; fence: string }): Promise<{ text: string; name: string } | null> {
  if (!isJobId(params.jobId) || !/^[1-9][0-9]{0,14}$/.test(params.fence)) return null;
  const fence = Number(params.fence);
  const store = await consoleStore();
  const attempt: AttemptRow | undefined = (await store.listAttempts(params.jobId)).find((a) => a.fence === fence);
  if (attempt) return { text: attempt.logs ?? '', name: `job-${attempt.jobId}-fence-${fence}.log` };
  const chunks = await store.listLogChunks({ jobId: params.jobId, fence, limit: LOG_CHUNKS_MAX_LIMIT });
  if (chunks.length === 0) return null;
  return { text: chunks.map((c) => c.text).join(''), name: `job-${params.jobId}-fence-${fence}-so-far.log` };
}
