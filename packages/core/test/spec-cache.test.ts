import { describe, expect, it } from 'vitest';
import { SpecCache } from '../src/engine/spec-cache';
import type { DagSpec } from '../src/spec';

const spec = (id: string) => ({ id }) as unknown as DagSpec;

describe('SpecCache', () => {
  it('keeps the most recently used versions up to its capacity', () => {
    const cache = new SpecCache(2);
    cache.set('a@1', spec('a'));
    cache.set('b@1', spec('b'));
    // Reading a@1 makes b@1 the least recently used, so b@1 goes when c@1 comes.
    expect(cache.get('a@1')).toEqual(spec('a'));
    cache.set('c@1', spec('c'));
    expect(cache.size).toBe(2);
    expect(cache.get('b@1')).toBeUndefined();
    expect(cache.get('a@1')).toEqual(spec('a'));
    expect(cache.get('c@1')).toEqual(spec('c'));
  });

  it('replaces a version set again without growing, and marks it recent', () => {
    const cache = new SpecCache(2);
    cache.set('a@1', spec('a'));
    cache.set('b@1', spec('b'));
    cache.set('a@1', spec('a2'));
    cache.set('c@1', spec('c'));
    expect(cache.size).toBe(2);
    expect(cache.get('a@1')).toEqual(spec('a2'));
    expect(cache.get('b@1')).toBeUndefined();
  });
});
