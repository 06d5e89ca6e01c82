import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { LIMITS } from '@fenceline/core';
import { appRouter } from '@/server/routers/app';
import { opaqueMessage } from '@/server/opaque-errors';
import { tooDeepAnswer } from '@/server/request-depth';
import { createContext } from '@/server/trpc';

// Every answer reflects the store now; nothing here may be cached or prerendered.
export const dynamic = 'force-dynamic';

/** The largest request the console accepts: a DAG spec at its limit plus the envelope. */
const MAX_BODY_BYTES = LIMITS.maxSpecBytes + 64 * 1024;

async function handler(req: Request): Promise<Response> {
  const declared = Number(req.headers.get('content-length') ?? 0);
  if (declared > MAX_BODY_BYTES) {
    return Response.json({ error: { code: 'TOO_LARGE', message: `request body of ${declared} bytes is over the limit of ${MAX_BODY_BYTES}` } }, { status: 413 });
  }
  const body = req.method === 'POST' ? await req.text() : null;
  // A body sent without its length (chunked) is measured once it is read.
  if (body !== null && Buffer.byteLength(body) > MAX_BODY_BYTES) {
    return Response.json({ error: { code: 'TOO_LARGE', message: `request body is over the limit of ${MAX_BODY_BYTES} bytes` } }, { status: 413 });
  }
  const tooDeep = tooDeepAnswer(body) ?? tooDeepAnswer(new URL(req.url).searchParams.get('input'));
  if (tooDeep) return tooDeep;
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req: body === null ? req : new Request(req, { body }),
    router: appRouter,
    createContext: ({ req: request, resHeaders }) => createContext({ req: request, resHeaders }),
    // The detail of an unexpected error is logged once, under the id its answer carries.
    onError({ error, path }) {
      opaqueMessage(error, path);
    },
  });
}

export { handler as GET, handler as POST };
