import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { LIMITS } from '@fenceline/core';
import { appRouter } from '@/server/routers/app';
import { readBodyWithin, withBody } from '@/server/body-limit';
import { opaqueMessage } from '@/server/opaque-errors';
import { tooDeepAnswer } from '@/server/request-depth';
import { createContext } from '@/server/trpc';

// Every answer reflects the store now; nothing here may be cached or prerendered.
export const dynamic = 'force-dynamic';

/** The largest request the console accepts: a DAG spec at its limit plus the envelope. */
const MAX_BODY_BYTES = LIMITS.maxSpecBytes + 64 * 1024;

async function handler(original: Request): Promise<Response> {
  // The body is counted as it arrives and read before anything else, whether or not the
  // request declares its length, so an oversized body costs at most the limit to refuse.
  const body = original.method === 'GET' || original.method === 'HEAD' ? new Uint8Array(0) : await readBodyWithin(original, MAX_BODY_BYTES);
  if (body === null) {
    return Response.json({ error: { code: 'TOO_LARGE', message: `request body is over the limit of ${MAX_BODY_BYTES} bytes` } }, { status: 413 });
  }
  const bodyless = original.method === 'GET' || original.method === 'HEAD';
  // Input nested past any limit is refused before superjson parses it (recursively).
  const tooDeep = (bodyless ? null : tooDeepAnswer(new TextDecoder().decode(body))) ?? tooDeepAnswer(new URL(original.url).searchParams.get('input'));
  if (tooDeep) return tooDeep;
  const req = bodyless ? original : withBody(original, body);
  return fetchRequestHandler({
    endpoint: '/api/trpc',
    req,
    router: appRouter,
    createContext: ({ req: request, resHeaders }) => createContext({ req: request, resHeaders }),
    // The detail of an unexpected error is logged once, under the id its answer carries.
    onError({ error, path }) {
      opaqueMessage(error, path);
    },
  });
}

export { handler as GET, handler as POST };
