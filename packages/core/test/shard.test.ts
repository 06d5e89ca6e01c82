import { describe, expect, it } from 'vitest';
import { fnv1a32, shardOf } from '../src/dag/shard';

function referenceFnv(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) hash = Math.imul(hash ^ byte, 0x01000193) >>> 0;
  return hash;
}

describe('sharding', () => {
  it('hashes with FNV-1a 32-bit (published test vectors)', () => {
    expect(fnv1a32('')).toBe(0x811c9dc5);
    expect(fnv1a32('a')).toBe(0xe40c292c);
    expect(fnv1a32('foobar')).toBe(0xbf9cf968);
  });

  it('hashes the UTF-8 bytes of the id', () => {
    for (const id of ['ünïcödé', '😀-dag', '日本語', 'lone\ud800surrogate']) expect(fnv1a32(id)).toBe(referenceFnv(id));
  });

  it('keeps every DAG on the shard it was stored on (values fixed forever)', () => {
    expect(shardOf('etl', 16)).toBe(0);
    expect(shardOf('nightly-report', 16)).toBe(11);
    expect(shardOf('dag-0', 16)).toBe(14);
    expect(shardOf('dag-1', 16)).toBe(1);
    expect(shardOf('ünïcödé', 1024)).toBe(978);
  });

  it('returns a shard in range and spreads ids across shards', () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) {
      const shard = shardOf(`dag-${i}`, 16);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(16);
      counts[shard]!++;
    }
    for (const c of counts) expect(c).toBeGreaterThan(800);
    expect(shardOf('anything', 1)).toBe(0);
  });

  it('refuses a shard count that is not a positive integer', () => {
    expect(() => shardOf('a', 0)).toThrow(/positive integer/);
    expect(() => shardOf('a', 2.5)).toThrow(/positive integer/);
  });
});
