import { openApiDocument } from '@/server/api/openapi';

// The document needs no token, so a client can be written from it before it has one. It is
// made per request rather than at build time, so a build never loads the store's modules for it.
export const dynamic = 'force-dynamic';

export function GET(): Response {
  return Response.json(openApiDocument());
}
