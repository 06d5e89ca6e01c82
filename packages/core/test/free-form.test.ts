import { describe, expect, it } from 'vitest';
import { characterProblem, clipText, jsonProblem, jsonProblems, jsonTextDepth, textProblem } from '../src/input/free-form';
import { validateDag } from '../src/dag/validate';
import { LIMITS } from '../src/limits';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value] : { k: value };
  return value;
}

const limits = { maxDepth: 8, maxBytes: 1_000 };

describe('free-form input checks', () => {
  it('refuses a NUL and lone surrogates of either half, and takes whole pairs', () => {
    expect(characterProblem('a\u0000b')).toMatch(/NUL/);
    expect(characterProblem('a\ud800')).toMatch(/surrogate/);
    expect(characterProblem('\udc00a')).toMatch(/surrogate/);
    expect(characterProblem('\udc00\ud800')).toMatch(/surrogate/);
    expect(characterProblem('emoji \ud83d\ude00 and ü')).toBeNull();
    expect(textProblem('ü'.repeat(6), 11)).toMatch(/at most 11 bytes of UTF-8, got 12/);
    expect(textProblem('ü'.repeat(5), 11)).toBeNull();
  });

  it('locates every bad string and key in JSON by its path, in the order it is written', () => {
    const problems = jsonProblems({ a: ['ok', 'x\u0000'], ['k\ud800']: 1, b: { c: Number.NaN } }, limits);
    expect(problems.map((p) => [p.kind, p.path.join('.')])).toEqual([
      ['characters', 'a.1'],
      ['characters', 'k\ud800'],
      ['not-json', 'b.c'],
    ]);
    expect(jsonProblem(new Date(0), limits)).toMatchObject({ kind: 'not-json', path: [] });
    expect(jsonProblem({ fine: [1, 'two', null, true, { three: 3 }] }, limits)).toBeNull();
  });

  it('stops at the depth and size limits without walking what lies past them', () => {
    expect(jsonProblem(nested(8), limits)).toBeNull();
    expect(jsonProblem(nested(9), limits)).toMatchObject({ kind: 'depth', path: [0, 'k', 0, 'k', 0, 'k', 0, 'k'] });
    // A million levels cost no more than the first few.
    expect(jsonProblem(nested(1_000_000), limits)?.kind).toBe('depth');
    expect(jsonProblem({ s: 'x'.repeat(1_000) }, limits)).toMatchObject({ kind: 'size' });
  });

  it('measures the nesting of JSON text without parsing it, ignoring brackets in strings', () => {
    expect(jsonTextDepth('{"a":[1,{"b":"[[[{{{"}]}')).toBe(3);
    expect(jsonTextDepth('"\\"[["')).toBe(0);
    expect(jsonTextDepth('['.repeat(50_000) + ']'.repeat(50_000))).toBe(50_000);
  });

  it('makes a DAG spec with such text or nesting invalid, naming where', () => {
    const result = validateDag({ id: 'd', name: 'n\u0000', tasks: [{ id: 'a', type: 'h', config: { deep: nested(LIMITS.maxJsonDepth) } }] });
    expect(result.ok).toBe(false);
    const issues = result.ok ? [] : result.issues;
    expect(issues.map((i) => `${i.kind} ${i.path}`)).toEqual(expect.arrayContaining(['shape name', expect.stringMatching(/^limit tasks\.0\.config\.deep/)]));
    expect(validateDag({ id: 'd', tasks: [{ id: 'a', type: 'noop', config: { note: 'fine \ud83d\ude00' } }] }).ok).toBe(true);
  });

  it('clips text without leaving half a surrogate pair at the end', () => {
    const text = `${'x'.repeat(499)}\ud83d\ude00tail`;
    expect(clipText(text, 500)).toBe('x'.repeat(499));
    expect(clipText(text, 501)).toBe(`${'x'.repeat(499)}\ud83d\ude00`);
    expect(clipText('short', 500)).toBe('short');
    expect(characterProblem(clipText(text, 500))).toBeNull();
  });
});
