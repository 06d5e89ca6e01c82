import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { LIMITS } from '@fenceline/core';
import { appRouter } from '@/server/routers/app';
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
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: ({ req: request, resHeaders }) => createContext({ req: request, resHeaders }),
    onError({ error, path }) {
      if (error.code === 'INTERNAL_SERVER_ERROR') console.error(`tRPC ${path ?? '?'} failed:`, error.cause ?? error);
    },
  });
}

export { handler as GET, handler as POST };
