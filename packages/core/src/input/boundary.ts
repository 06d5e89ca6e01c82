import { InvalidInputError } from '../errors';
import { utf8ByteLength } from '../dag/limit-checks';
import { LIMITS } from '../limits';
import { characterProblem } from './free-form';
import { instantProblem } from './instants';

/**
 * The one check every input of the console and the HTTP API passes before any procedure
 * or store sees it: every string and every key, wherever it is in the input (a path's id,
 * a query's filter, a body's field, a header), has no NUL, no lone surrogate and at most
 * LIMITS.maxInputStringBytes bytes; every date (the console's wire form can carry one)
 * lies in the range an instant may have (instants.ts); nothing is nested past twice
 * LIMITS.maxJsonDepth; and nothing but JSON data and dates is accepted. Each field keeps
 * its own schema for what it means (an id's form, a number's range); this check is what
 * every field has in common, so no field can forget it.
 */

export interface BoundaryProblem {
  /** Keys and indexes from the input's root to the value at fault. */
  path: (string | number)[];
  message: string;
}

/** Nesting the boundary lets through: the fields' own checks refuse deeper than LIMITS.maxJsonDepth, naming the place. */
const MAX_DEPTH = 2 * LIMITS.maxJsonDepth;

function stringProblem(text: string): string | null {
  const characters = characterProblem(text);
  if (characters !== null) return characters;
  // A string under a quarter of the limit in UTF-16 units cannot be over it in UTF-8 bytes.
  if (text.length * 3 <= LIMITS.maxInputStringBytes) return null;
  const bytes = utf8ByteLength(text);
  return bytes > LIMITS.maxInputStringBytes ? `must be at most ${LIMITS.maxInputStringBytes} bytes of UTF-8, got ${bytes}` : null;
}

function isPlainObject(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

/** The first `max` problems of an input, walked without recursion. */
export function boundaryProblems(input: unknown, max = 5): BoundaryProblem[] {
  const problems: BoundaryProblem[] = [];
  const stack: { value: unknown; path: (string | number)[]; depth: number }[] = [{ value: input, path: [], depth: 0 }];
  while (stack.length > 0 && problems.length < max) {
    const { value, path, depth } = stack.pop()!;
    if (value === null || value === undefined || typeof value === 'boolean') continue;
    if (typeof value === 'number') {
      if (!Number.isFinite(value)) problems.push({ path, message: 'must be a finite number' });
    } else if (typeof value === 'string') {
      const problem = stringProblem(value);
      if (problem !== null) problems.push({ path, message: problem });
    } else if (value instanceof Date) {
      const problem = instantProblem(value);
      if (problem !== null) problems.push({ path, message: problem });
    } else if (typeof value === 'object' && (Array.isArray(value) || isPlainObject(value))) {
      if (depth >= MAX_DEPTH) {
        problems.push({ path, message: `must not be nested more than ${MAX_DEPTH} levels deep` });
        continue;
      }
      const entries: [string | number, unknown][] = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [at, child] = entries[i]!;
        if (typeof at === 'string') {
          const problem = stringProblem(at);
          if (problem !== null) problems.push({ path: [...path, at], message: `key ${problem}` });
        }
        stack.push({ value: child, path: [...path, at], depth: depth + 1 });
      }
    } else {
      problems.push({ path, message: 'must be JSON data (null, a boolean, a number, a string, an array or an object)' });
    }
  }
  return problems;
}

/** Throws InvalidInputError naming the first field at fault (`where` for the input as a whole), listing each problem as an issue. */
export function checkBoundary(input: unknown, where: string): void {
  const problems = boundaryProblems(input);
  if (problems.length === 0) return;
  const issues = problems.map((p) => ({ field: p.path.length === 0 ? where : p.path.map(String).join('.'), message: p.message }));
  throw new InvalidInputError(issues.map((i) => `${i.field}: ${i.message}`).join('; '), { field: issues[0]!.field, issues });
}
