import { NextResponse, type NextRequest } from 'next/server';
import { apiPathRefusal, NOT_FOUND_PAGE, pathProblem } from './server/path-check';

/**
 * Runs before every route and page: a path that cannot be decoded (server/path-check.ts)
 * is answered before Next decodes it for a route. An API or tRPC path gets a 400 in the
 * API's shape; a page gets the console's not-found page (a route of its own), with a 404.
 */
export function proxy(request: NextRequest): Response {
  const { pathname } = request.nextUrl;
  const problem = pathProblem(pathname);
  if (problem === null) return NextResponse.next();
  if (pathname.startsWith('/api/')) return apiPathRefusal(problem);
  return NextResponse.rewrite(new URL(NOT_FOUND_PAGE, request.url), { status: 404 });
}

export const config = {
  // Every path but Next's own assets, which it serves by their exact names.
  matcher: ['/((?!_next/static|_next/image|favicon.ico).*)'],
};
