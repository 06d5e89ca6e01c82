import { describe, expect, it } from 'vitest';
import type { Clock, Timers } from '../src/clock';
import { WorkerPool } from '../src/node/worker-pool';

function fakeTime(): Clock & Timers & { advance(ms: number): void } {
  let now = 1_000_000;
  return {
    nowMs: () => now,
    after: () => () => undefined,
    advance(ms) {
      now += ms;
    },
  };
}

describe('WorkerPool', () => {
  it('keeps a fully busy worker in the pool while it renews or writes results', () => {
    const time = fakeTime();
    const pool = new WorkerPool(time, time, 60_000);
    pool.touch('busy', 4);
    pool.touch('quiet', 4);
    expect(pool.poolSlots()).toBe(8);
    // Neither polls again (the busy one has no free slot); only the busy one renews.
    for (let k = 0; k < 3; k++) {
      time.advance(30_000);
      pool.seen('busy');
    }
    expect(pool.live().map((w) => w.id)).toEqual(['busy']);
    expect(pool.poolSlots()).toBe(4);
    expect(pool.expire()).toEqual(['quiet']);
    // An unknown worker is not added by a write: it must register first.
    pool.seen('stranger');
    expect(pool.live().map((w) => w.id)).toEqual(['busy']);
  });

  it('lists only workers with an open poll, and credits freed slots up to the worker size', () => {
    const time = fakeTime();
    const pool = new WorkerPool(time, time, 60_000);
    void pool.wait('a', 4, 1, 25_000, () => undefined);
    pool.touch('b', 4);
    expect(pool.waiting()).toEqual([{ workerId: 'a', free: 1 }]);
    expect(pool.credit('a', 10)).toBe(true);
    expect(pool.waiting()).toEqual([{ workerId: 'a', free: 4 }]);
    expect(pool.credit('b', 1)).toBe(false);
    expect(pool.deliver('a', [])).toBe(true);
    expect(pool.waiting()).toEqual([]);
  });
});
