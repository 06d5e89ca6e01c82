import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeRunCursor, encodeRunCursor, InvalidInputError, type RunCursor, type RunId } from '../src/index';

/**
 * Property tests over runs-list cursors: a cursor a store wrote reads back as itself, and
 * any other text (a written cursor with a character changed, added or taken away, random
 * text, or base64url of cursor-like fields a store never writes) is refused as
 * INVALID_INPUT naming `cursor`, unless it is exactly what encodeRunCursor writes for the
 * position it names.
 */

const order = fc.constantFrom('newest' as const, 'oldest' as const);

/** An instant a store holds, to the microsecond, as a key writes it. */
const keyTime = fc
  .tuple(fc.date({ min: new Date('0001-01-01T00:00:00.000Z'), max: new Date('9999-12-31T23:59:59.999Z'), noInvalidDate: true }), fc.integer({ min: 0, max: 999 }))
  .map(([at, micros]) => `${at.toISOString().slice(0, -1)}${String(micros).padStart(3, '0')}Z`);

const runId = fc.bigInt({ min: 1n, max: 2n ** 63n - 1n }).map((n) => String(n) as RunId);

const cursor: fc.Arbitrary<RunCursor> = fc.record({ order, way: fc.constantFrom('after' as const, 'before' as const), key: fc.record({ scheduledAt: keyTime, id: runId }) });

const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
/** Characters a mutation puts in: the cursor alphabet, padding, and what base64 (not url) and a careless client use. */
const anyChar = fc.oneof(fc.constantFrom(...BASE64URL.split('')), fc.constantFrom('=', '+', '/', '.', ' ', '%', '\u0000', '\ud800', 'é'));

/** One edit of a text: a character replaced, inserted or removed, the text cut short or extended. */
const mutation = fc.oneof(
  fc.record({ kind: fc.constant('replace' as const), at: fc.nat(), char: anyChar }),
  fc.record({ kind: fc.constant('insert' as const), at: fc.nat(), char: anyChar }),
  fc.record({ kind: fc.constant('remove' as const), at: fc.nat(), char: fc.constant('') }),
  fc.record({ kind: fc.constant('cut' as const), at: fc.nat(), char: fc.constant('') }),
  fc.record({ kind: fc.constant('append' as const), at: fc.constant(0), char: fc.string({ minLength: 1, maxLength: 8 }) }),
);

function mutate(text: string, edit: { kind: string; at: number; char: string }): string {
  const at = edit.at % (text.length + 1);
  if (edit.kind === 'replace') return text.slice(0, at) + edit.char + text.slice(at + 1);
  if (edit.kind === 'insert') return text.slice(0, at) + edit.char + text.slice(at);
  if (edit.kind === 'remove') return text.slice(0, at) + text.slice(at + 1);
  if (edit.kind === 'cut') return text.slice(0, at);
  return text + edit.char;
}

/** Base64url of any text, as a client that forges a cursor would write it (lone surrogates cannot be written, and are left out). */
function base64url(text: string): string {
  return Buffer.from(text, 'latin1').toString('base64url');
}

/** Fields shaped like a cursor's, most of which a store never writes: other versions, ways, dates that do not exist, ids out of range. */
const forgedPlain = fc
  .tuple(
    fc.constantFrom('r1', 'r2', 'R1', ''),
    fc.constantFrom('newest', 'oldest', 'Newest', ''),
    fc.constantFrom('after', 'before', 'around'),
    fc.oneof(
      keyTime,
      fc.constantFrom(
        '0000-01-01T00:00:00.000000Z',
        '2026-02-30T00:00:00.000000Z',
        '2026-01-01T24:00:00.000000Z',
        '2026-01-01T00:00:00.000Z',
        '2026-01-01T00:00:00.000000+00:00',
        '+275760-09-13T00:00:00.000000Z',
      ),
    ),
    fc.oneof(runId, fc.constantFrom('0', '01', '-1', '1.5', '9223372036854775808', '1'.repeat(40), '', ' 1')),
    fc.array(fc.string({ maxLength: 4 }), { maxLength: 2 }),
  )
  .map(([version, o, way, at, id, extra]) => [version, o, way, at, id, ...extra].join('|'));

/**
 * The oracle: a text is taken only when it is exactly what encodeRunCursor writes for the
 * cursor it was read as, and for the order asked for; otherwise it is refused, typed.
 */
function judge(text: string, asked: 'newest' | 'oldest'): void {
  let read: RunCursor;
  try {
    read = decodeRunCursor(text, asked);
  } catch (err) {
    expect(err, JSON.stringify(text)).toBeInstanceOf(InvalidInputError);
    expect((err as InvalidInputError).details).toEqual({ field: 'cursor' });
    expect((err as Error).message).toMatch(/^cursor: /);
    return;
  }
  expect(encodeRunCursor(read), JSON.stringify(text)).toBe(text);
  expect(read.order).toBe(asked);
}

describe('runs-list cursors', () => {
  it('reads back every cursor a store writes as itself', () => {
    fc.assert(
      fc.property(cursor, (c) => {
        expect(decodeRunCursor(encodeRunCursor(c), c.order)).toEqual(c);
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses a written cursor with any edit, unless the edit is another written cursor', () => {
    let refused = 0;
    fc.assert(
      fc.property(cursor, fc.array(mutation, { minLength: 1, maxLength: 3 }), order, (c, edits, asked) => {
        const text = edits.reduce(mutate, encodeRunCursor(c));
        judge(text, asked);
        if (text !== encodeRunCursor(c)) {
          try {
            decodeRunCursor(text, asked);
          } catch {
            refused++;
          }
        }
      }),
      { numRuns: 3000 },
    );
    // Most edits break a cursor; the oracle above checks the few that do not.
    expect(refused).toBeGreaterThan(2000);
  });

  it('refuses random text, and base64url of fields a store never writes', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 250 }), fc.string({ unit: 'binary', maxLength: 60 }), forgedPlain.map(base64url)), order, (text, asked) => judge(text, asked)),
      { numRuns: 3000 },
    );
  });

  it('refuses a cursor given out for the other order', () => {
    fc.assert(
      fc.property(cursor, (c) => {
        const other = c.order === 'newest' ? 'oldest' : 'newest';
        expect(() => decodeRunCursor(encodeRunCursor(c), other)).toThrow(InvalidInputError);
      }),
    );
  });
});
