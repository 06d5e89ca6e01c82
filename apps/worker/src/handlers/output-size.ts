import { LIMITS, utf8ByteLength } from '@fenceline/core';

/**
 * The end of `text` that keeps an output holding it within LIMITS.maxOutputBytes, with
 * `reserveBytes` left for the rest of the output: the store refuses a larger output, and
 * for captured text (a command's stdout, a response body) the end is what says how it went.
 */
export function clipForOutput(text: string, reserveBytes = 256): string {
  const budget = LIMITS.maxOutputBytes - reserveBytes;
  let kept = text;
  // JSON text of a string may be up to six bytes a character (\u escapes), so shorten until it fits.
  while (kept.length > 0 && utf8ByteLength(JSON.stringify(kept)) > budget) kept = kept.slice(Math.max(1, Math.floor(kept.length / 8)));
  return kept;
}
