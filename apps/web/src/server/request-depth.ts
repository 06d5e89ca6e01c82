import { jsonTextDepth, LIMITS } from '@fenceline/core';

/**
 * The transformer copies a request's input recursively before any schema sees it, so input
 * nested far deeper than any procedure takes is refused from its text first. The bound is
 * twice the schemas' own limit, so input just past that limit still reaches the schema,
 * whose answer names the field, and the envelope (superjson's `json` wrapper, a batch's
 * index) fits under it.
 */
const MAX_TEXT_DEPTH = 2 * LIMITS.maxJsonDepth;

/** A 400 answer in the tRPC error shape for input nested too deeply, or null if it is not. */
export function tooDeepAnswer(text: string | null): Response | null {
  if (text === null || jsonTextDepth(text) <= MAX_TEXT_DEPTH) return null;
  const message = `input: must not be nested more than ${LIMITS.maxJsonDepth} levels deep`;
  return Response.json({ error: { json: { message, code: -32600, data: { code: 'BAD_REQUEST', httpStatus: 400, fenceline: null } } } }, { status: 400 });
}
