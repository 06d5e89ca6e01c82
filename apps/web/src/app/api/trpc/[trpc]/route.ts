import { fetchRequestHandler } from '@trpc/server/adapters/fetch';
import { appRouter } from '@/server/routers/app';
import { createContext } from '@/server/trpc';

// Every answer reflects the store now; nothing here may be cached or prerendered.
export const dynamic = 'force-dynamic';

function handler(req: Request): Promise<Response> {
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
