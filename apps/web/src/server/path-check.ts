import { characterProblem } from '@fenceline/core';

/**
 * The longest path segment the console serves, in characters as sent. No id, name or
 * procedure a route takes comes near it (ids are at most 128 characters); a longer segment
 * is refused here, so a page never renders for an id no store could hold.
 */
export const MAX_PATH_SEGMENT_LENGTH = 1024;

/**
 * The page the proxy shows for a path it refuses: a route of its own (app/not-found-page),
 * which renders the console's not-found page with a 404.
 */
export const NOT_FOUND_PAGE = '/not-found-page';

/**
 * A request path the console cannot serve: a segment that is no percent-encoding of UTF-8
 * (`%FF`, `%ED%A0%80`, a bare `%`), one that decodes to a character no id can have (a
 * NUL, a lone surrogate), or one longer than MAX_PATH_SEGMENT_LENGTH. Next decodes a
 * path's segments for its routes and pages, and a segment it cannot decode failed the
 * request with a 500, so the proxy refuses such a path before any route or page runs
 * (proxy.ts).
 */
export function pathProblem(pathname: string): string | null {
  for (const segment of pathname.split('/')) {
    if (segment.length > MAX_PATH_SEGMENT_LENGTH) return `has a segment longer than ${MAX_PATH_SEGMENT_LENGTH} characters`;
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

/** The answer to such a path under /api/: the API's one refusal shape (api/errors.ts), naming the path. */
export function apiPathRefusal(problem: string): Response {
  return Response.json(
    { code: 'INVALID_INPUT', message: `path: ${problem}`, issues: [{ field: 'path', message: problem }] },
    { status: 400, headers: { 'cache-control': 'no-store' } },
  );
}
