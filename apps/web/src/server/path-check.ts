import { characterProblem } from '@fenceline/core';

/**
 * A request path the console cannot serve: a segment that is no percent-encoding of UTF-8
 * (`%FF`, `%ED%A0%80`, a bare `%`), or one that decodes to a character no id can have (a
 * NUL, a lone surrogate). Next decodes a path's segments for its routes and pages, and a
 * segment it cannot decode failed the request with a 500, so the proxy refuses such a path
 * before any route or page runs (proxy.ts).
 */
export function pathProblem(pathname: string): string | null {
  for (const segment of pathname.split('/')) {
    let decoded: string;
    try {
      decoded = decodeURIComponent(segment);
    } catch {
      return 'is not percent-encoded UTF-8';
    }
    const problem = characterProblem(decoded);
    if (problem !== null) return problem;
  }
  return null;
}

/** The answer to such a path under /api/v1: the API's one refusal shape (api/errors.ts), naming the path. */
export function apiPathRefusal(problem: string): Response {
  return Response.json(
    { code: 'INVALID_INPUT', message: `path: ${problem}`, issues: [{ field: 'path', message: problem }] },
    { status: 400, headers: { 'cache-control': 'no-store' } },
  );
}
