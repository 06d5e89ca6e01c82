import { utf8ByteLength } from '../dag/limit-checks';
import { LIMITS } from '../limits';

/**
 * The one check every free-form field passes at a boundary (worker logs, errors, output
 * and metadata; console ids, search text and DAG specs) before any store sees it.
 * PostgreSQL refuses a NUL character in text and jsonb and a lone surrogate in jsonb, and
 * a value nested thousands of levels deep exhausts the stack of whatever walks it
 * recursively, so each of these is refused here with the path of the value at fault.
 *
 * The walk is iterative and stops at the depth and size limits, so a hostile value costs
 * no more than the limits it is checked against.
 *
 * Where text is the node's or the worker's own to send (captured logs, an event's data),
 * it is made storable instead of refused: replaceUnstorable, storableJson and clipText.
 */

export interface FreeFormLimits {
  /** The most levels of arrays and objects, the outermost counting as one. */
  maxDepth: number;
  /** The most bytes of UTF-8 the value takes as JSON. */
  maxBytes: number;
}

export interface FreeFormProblem {
  /** What is wrong: a character the store refuses, nesting, size, or a value that is not JSON data. */
  kind: 'characters' | 'depth' | 'size' | 'not-json';
  /** Where in the value the problem is: keys and array indexes from its root. */
  path: (string | number)[];
  message: string;
}

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a string cannot be stored as text or inside jsonb, or null if it can. */
export function characterProblem(text: string): string | null {
  if (text.includes('\u0000')) return 'must not contain a NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'must not contain a lone UTF-16 surrogate (text that is not valid Unicode)';
  return null;
}

/** Why a free-form string is refused (characters, then size), or null if it is accepted. */
export function textProblem(text: string, maxBytes: number): string | null {
  const characters = characterProblem(text);
  if (characters !== null) return characters;
  const bytes = utf8ByteLength(text);
  return bytes > maxBytes ? `must be at most ${maxBytes} bytes of UTF-8, got ${bytes}` : null;
}

interface Frame {
  value: unknown;
  path: (string | number)[];
  depth: number;
  /** The key the value is under, when its parent is an object: checked with the value, in order. */
  key?: string;
}

/**
 * The problems of a free-form JSON value, at most `max` of them: strings and keys that
 * fail characterProblem, values that are not JSON data (undefined inside an array, a
 * function, a BigInt, a number that is not finite, an instance of a class), nesting past
 * maxDepth and a size past maxBytes. Depth and size end the walk, since what lies beyond
 * them is not looked at.
 */
export function jsonProblems(root: unknown, limits: FreeFormLimits, max = 20): FreeFormProblem[] {
  const problems: FreeFormProblem[] = [];
  const stack: Frame[] = [{ value: root, path: [], depth: 0 }];
  let bytes = 0;
  while (stack.length > 0 && problems.length < max) {
    const { value, path, depth, key } = stack.pop()!;
    if (key !== undefined) {
      const problem = characterProblem(key);
      if (problem !== null) problems.push({ kind: 'characters', path, message: `key ${problem}` });
      bytes += utf8ByteLength(key) + 3;
    }
    if (value === null || typeof value === 'boolean') {
      bytes += String(value).length;
    } else if (typeof value === 'number') {
      if (!Number.isFinite(value)) problems.push({ kind: 'not-json', path, message: 'must be a finite number' });
      bytes += String(value).length;
    } else if (typeof value === 'string') {
      const problem = characterProblem(value);
      if (problem !== null) problems.push({ kind: 'characters', path, message: problem });
      bytes += utf8ByteLength(value) + 2;
    } else if (typeof value === 'object' && (Array.isArray(value) || isPlainObject(value))) {
      if (depth + 1 > limits.maxDepth) {
        problems.push({ kind: 'depth', path, message: `must not be nested more than ${limits.maxDepth} levels deep` });
        break;
      }
      const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
      bytes += 2 + entries.length;
      // Pushed in reverse, so problems are found in the order the value is written.
      for (let i = entries.length - 1; i >= 0; i--) {
        const [at, child] = entries[i]!;
        // An object's undefined member is left out of its JSON, as JSON.stringify does.
        if (child === undefined && typeof at === 'string') continue;
        stack.push({ value: child, path: [...path, at], depth: depth + 1, key: typeof at === 'string' ? at : undefined });
      }
    } else {
      problems.push({ kind: 'not-json', path, message: 'must be JSON data (null, a boolean, a number, a string, an array or an object)' });
    }
    if (bytes > limits.maxBytes) {
      problems.push({ kind: 'size', path: [], message: `must be at most ${limits.maxBytes} bytes of JSON` });
      break;
    }
  }
  return problems.slice(0, max);
}

/** The first problem of a free-form JSON value, or null if it has none. */
export function jsonProblem(value: unknown, limits: FreeFormLimits): FreeFormProblem | null {
  return jsonProblems(value, limits, 1)[0] ?? null;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * How deeply arrays and objects nest in JSON text, read without parsing it: for a boundary
 * whose parser or transformer walks a parsed value recursively, so the text is refused
 * before that walk can run out of stack. Brackets inside strings do not count.
 */
export function jsonTextDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x5b || ch === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (ch === 0x5d || ch === 0x7d) depth--;
  }
  return deepest;
}

/**
 * The first `maxUnits` UTF-16 units of a text, without cutting a surrogate pair in half: a
 * half pair left at the end is a lone surrogate, which PostgreSQL refuses in jsonb.
 */
export function clipText(text: string, maxUnits: number): string {
  if (text.length <= maxUnits) return text;
  const last = text.charCodeAt(maxUnits - 1);
  return text.slice(0, last >= 0xd800 && last <= 0xdbff ? maxUnits - 1 : maxUnits);
}

const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;

/** The text with every NUL and lone surrogate replaced by U+FFFD. */
export function replaceUnstorable(text: string): string {
  return text.replace(UNSTORABLE, '\ufffd');
}

/**
 * A copy of a small JSON value the node made itself (an event's data) that any store can
 * keep: every string and key with replaceUnstorable applied, and anything nested past
 * LIMITS.maxJsonDepth levels replaced by a note saying so. A value written in one
 * statement with other callers' values must not fail that statement for all of them.
 */
export function storableJson(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return replaceUnstorable(value);
  if (value === null || typeof value !== 'object') return value;
  if (depth >= LIMITS.maxJsonDepth) return '[nested too deep to store]';
  if (Array.isArray(value)) return value.map((v) => storableJson(v, depth + 1));
  if (value instanceof Date) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) out[replaceUnstorable(k)] = storableJson(v, depth + 1);
  return out;
}
