import { describe, expect, it } from 'vitest';
import type { Timers } from '../src/clock';
import { Batcher } from '../src/engine/batcher';
import { StoreUnavailableError } from '../src/unavailable';

/** Timers that fire only when the test says so, so batch boundaries are exact. */
function manualTimers(): Timers & { fire(): void; armed(): number } {
  let queue: (() => void)[] = [];
  return {
    after(_ms, fn) {
      queue.push(fn);
      return () => {
        queue = queue.filter((f) => f !== fn);
      };
    },
    fire() {
      const due = queue;
      queue = [];
      for (const fn of due) fn();
    },
    armed: () => queue.length,
  };
}

/** A batch call the test answers by hand, recording every batch it was given. */
function manualCall() {
  const batches: number[][] = [];
  const answers: (() => void)[] = [];
  const run = (items: number[]): Promise<string[]> => {
    batches.push(items);
    return new Promise((resolve) => answers.push(() => resolve(items.map((i) => `r${i}`))));
  };
  return { batches, run, answerNext: () => answers.shift()!() };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('Batcher', () => {
  it('answers every caller with its own result, one call per window', async () => {
    const timers = manualTimers();
    const call = manualCall();
    const b = new Batcher(timers, { windowMs: 5, maxBatch: 100 }, call.run);
    const results = Promise.all([b.submit(1), b.submit(2), b.submit(3)]);
    expect(call.batches).toEqual([]);
    timers.fire();
    expect(call.batches).toEqual([[1, 2, 3]]);
    call.answerNext();
    expect(await results).toEqual(['r1', 'r2', 'r3']);
  });

  it('sends a full batch at once and splits what exceeds it', async () => {
    const timers = manualTimers();
    const call = manualCall();
    const b = new Batcher(timers, { windowMs: 5, maxBatch: 2 }, call.run);
    const all = b.submitMany([1, 2, 3, 4, 5]);
    expect(call.batches).toEqual([
      [1, 2],
      [3, 4],
    ]);
    timers.fire();
    expect(call.batches).toEqual([[1, 2], [3, 4], [5]]);
    call.answerNext();
    call.answerNext();
    call.answerNext();
    expect(await all).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('keeps a batch under maxWeight, and sends an item heavier than that alone', async () => {
    const timers = manualTimers();
    const call = manualCall();
    const b = new Batcher(timers, { windowMs: 5, maxBatch: 100, weight: (n: number) => n, maxWeight: 10 }, call.run);
    const all = b.submitMany([4, 4, 4, 20, 1]);
    expect(call.batches).toEqual([[4, 4], [4], [20]]);
    timers.fire();
    expect(call.batches).toEqual([[4, 4], [4], [20], [1]]);
    for (let i = 0; i < 4; i++) call.answerNext();
    expect(await all).toEqual(['r4', 'r4', 'r4', 'r20', 'r1']);
  });

  it('with one batch in flight, gathers the next until it returns, then sends it at once', async () => {
    const timers = manualTimers();
    const call = manualCall();
    const b = new Batcher(timers, { windowMs: 0, maxBatch: 100, maxInFlight: 1 }, call.run);
    const first = b.submit(1);
    timers.fire();
    expect(call.batches).toEqual([[1]]);
    const later = [b.submit(2), b.submit(3), b.submit(4)];
    // No timer is armed while the batch is out: the items wait for it, not for a window.
    expect(timers.armed()).toBe(0);
    timers.fire();
    expect(call.batches).toEqual([[1]]);
    call.answerNext();
    await first;
    await settle();
    expect(call.batches).toEqual([[1], [2, 3, 4]]);
    call.answerNext();
    expect(await Promise.all(later)).toEqual(['r2', 'r3', 'r4']);
  });

  it('rejects every item of a batch the store could not be reached for, and carries on with the next', async () => {
    const timers = manualTimers();
    let fail = true;
    const calls: number[][] = [];
    const b = new Batcher(timers, { windowMs: 0, maxBatch: 10 }, async (items: number[]) => {
      calls.push(items);
      if (fail) throw new StoreUnavailableError('store away');
      return items.map((i) => i * 10);
    });
    const doomed = [b.submit(1), b.submit(2)].map((p) =>
      p.then(
        () => 'ok',
        (e: Error) => e.message,
      ),
    );
    timers.fire();
    expect(await Promise.all(doomed)).toEqual(['store away', 'store away']);
    // An outage refuses each item alone too: they are not tried again one by one.
    expect(calls).toEqual([[1, 2]]);
    fail = false;
    const ok = b.submit(3);
    timers.fire();
    expect(await ok).toBe(30);
  });

  it('tries a failed batch again item by item, so only the item at fault fails and hears of it', async () => {
    const timers = manualTimers();
    const calls: number[][] = [];
    const b = new Batcher(timers, { windowMs: 0, maxBatch: 10 }, async (items: number[]) => {
      calls.push(items);
      // The statement fails whole, naming every parameter it was given, as a driver's error does.
      if (items.includes(13)) throw new Error(`failed statement; params: ${items.join(',')}`);
      return items.map((i) => i * 10);
    });
    const answers = [1, 13, 2].map((n) =>
      b.submit(n).then(
        (r) => `ok ${r}`,
        (e: Error) => e.message,
      ),
    );
    timers.fire();
    expect(await Promise.all(answers)).toEqual(['ok 10', 'failed statement; params: 13', 'ok 20']);
    expect(calls).toEqual([[1, 13, 2], [1], [13], [2]]);
  });

  it('answers each item of a failed batch once, also when the retries throw before they start', async () => {
    const timers = manualTimers();
    let calls = 0;
    const b = new Batcher(timers, { windowMs: 0, maxBatch: 10 }, (items: number[]) => {
      calls++;
      if (items.length > 1 || items[0] === 2) throw new Error(`bad ${items.join(',')}`);
      return Promise.resolve(items.map((i) => i * 10));
    });
    const answers = [1, 2].map((n) =>
      b.submit(n).then(
        (r) => `ok ${r}`,
        (e: Error) => e.message,
      ),
    );
    timers.fire();
    expect(await Promise.all(answers)).toEqual(['ok 10', 'bad 2']);
    expect(calls).toBe(3);
  });
});
