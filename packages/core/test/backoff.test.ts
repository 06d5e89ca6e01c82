import { describe, expect, it } from 'vitest';
import { maxAttemptsOf, retryBackoffMs } from '../src/run/backoff';
import { retryDelayAfter } from '../src/worker/backoff';

describe('retry backoff', () => {
  it('doubles from the base after each failed attempt, up to the maximum', () => {
    expect([1, 2, 3, 4, 5, 6, 7].map((a) => retryBackoffMs(a, 5_000, 300_000))).toEqual([5_000, 10_000, 20_000, 40_000, 80_000, 160_000, 300_000]);
  });

  it('stays at the maximum for huge attempt numbers and is zero for a zero base', () => {
    expect(retryBackoffMs(5_000, 1_000, 60_000)).toBe(60_000);
    expect(retryBackoffMs(5_000, 0, 60_000)).toBe(0);
  });

  it('refuses an attempt number below 1', () => {
    expect(() => retryBackoffMs(0, 1_000, 60_000)).toThrow(/attempt/);
  });

  it('gives a task its retries plus the first attempt', () => {
    expect(maxAttemptsOf({ retries: 0 })).toBe(1);
    expect(maxAttemptsOf({ retries: 3 })).toBe(4);
  });
});

describe("a worker's wait before asking a node again", () => {
  it('is the backoff, or what the node asked for in Retry-After when that is longer, at most a minute', () => {
    expect([0, 1, 5, 9].map((a) => retryDelayAfter(new Error('reset'), a))).toEqual([100, 200, 2_000, 2_000]);
    expect(retryDelayAfter(Object.assign(new Error('503'), { retryAfterMs: 5_000 }), 1)).toBe(5_000);
    expect(retryDelayAfter(Object.assign(new Error('503'), { retryAfterMs: 50 }), 5)).toBe(2_000);
    expect(retryDelayAfter(Object.assign(new Error('503'), { retryAfterMs: 3_600_000 }), 1)).toBe(60_000);
    expect(retryDelayAfter({ retryAfterMs: 'soon' }, 0)).toBe(100);
    expect(retryDelayAfter(null, 0)).toBe(100);
  });
});
