/**
 * Inputs that PostgreSQL or a recursive walk cannot take, and the marks of an answer that
 * leaks what it should not, shared by the tests that throw them at the scheduler and the
 * console.
 */

/** JSON text of a value nested `depth` levels deep, alternating arrays and objects. */
export function deeplyNestedText(depth: number): string {
  let open = '';
  let close = '';
  for (let i = 0; i < depth; i++) {
    open += i % 2 === 0 ? '[' : '{"d":';
    close = (i % 2 === 0 ? ']' : '}') + close;
  }
  return `${open}"bottom"${close}`;
}

/**
 * Stands for 5,000-deep nesting inside a value given to `toJsonText`: the runtime's own
 * JSON.stringify runs out of stack on such a value, so the text is spliced in instead.
 */
export const DEEP = '\u2063deep-nesting\u2063';

/** JSON.stringify, with every DEEP string replaced by nesting DEEP_NESTING levels deep. */
export function toJsonText(value: unknown): string {
  return JSON.stringify(value).split(JSON.stringify(DEEP)).join(deeplyNestedText(DEEP_NESTING));
}

/** Text and JSON no store may be handed: a NUL, a lone surrogate, and nesting past any sane depth. */
export const BAD_STRINGS = ['nul\u0000here', 'lone\ud800surrogate', 'trailing\udfff'] as const;
export const DEEP_NESTING = 5_000;
export const BAD_VALUES: readonly string[] = [...BAD_STRINGS, DEEP];

/**
 * Every leaf path of a JSON value (strings, numbers, booleans, nulls, empty containers),
 * so a test can replace each field of a valid input in turn.
 */
export function leafPaths(value: unknown, path: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value) && value.length > 0) return value.flatMap((v, i) => leafPaths(v, [...path, i]));
  if (value !== null && typeof value === 'object' && Object.keys(value).length > 0) return Object.entries(value).flatMap(([k, v]) => leafPaths(v, [...path, k]));
  return [path];
}

/** A copy of `value` with the leaf at `path` replaced (the root when the path is empty). */
export function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path;
  const copy = (Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) }) as Record<string | number, unknown>;
  copy[head!] = replaceAt(copy[head!], rest, replacement);
  return copy;
}

/**
 * What no answer may carry: the text of a statement or its parameters, a stack frame, or
 * the name of a JavaScript runtime failure. A driver lists a statement's parameters on a
 * line of their own (`\nparams: ...`, escaped in a JSON answer); a field named `params`
 * in a refusal (`params: expected an object`) is not that.
 */
const LEAKS = [
  /failed query/i,
  /(?:^|\n|\\n)params:/i,
  /\bselect\b[\s\S]*\bfrom\b/i,
  /\binsert into\b/i,
  /\bupdate \w+ set\b/i,
  /\n\s+at /,
  /Maximum call stack/i,
  /node_modules/,
  /\.ts:\d+/,
];

export function leakIn(text: string): string | null {
  for (const pattern of LEAKS) if (pattern.test(text)) return `${pattern}: ${text.slice(0, 400)}`;
  return null;
}
