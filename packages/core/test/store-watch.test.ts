import { describe, expect, it } from 'vitest';
import { Batcher } from '../src/engine/batcher';
import { StoreWatch } from '../src/engine/store-watch';
import { isStoreUnavailable, StoreUnavailableError } from '../src/unavailable';

/** A store whose calls the test answers by hand: `stuck` never answers, as a connection lost without a word. */
function fakeStore() {
  const waiting: { resolve: (v: string) => void; reject: (e: unknown) => void }[] = [];
  return {
    waiting,
    store: {
      write: (x: string): Promise<string> => new Promise((resolve, reject) => waiting.push({ resolve: () => resolve(`wrote ${x}`), reject })),
      stuck: (): Promise<string> => new Promise(() => {}),
      down: (): Promise<string> => Promise.reject(new StoreUnavailableError('the database is unavailable (ECONNREFUSED)')),
      name: 'fake',
    },
  };
}

function recorder() {
  const told: string[] = [];
  return {
    told,
    hooks: {
      stalled: (method: string, waitedMs: number, failed: number) => told.push(`stalled ${method} after ${waitedMs} ms, ${failed} failed`),
      outageBegan: (method: string, err: StoreUnavailableError) => told.push(`outage began in ${method}: ${err.message}`),
      outageEnded: (ms: number, failed: number) => told.push(`outage ended after ${ms} ms, ${failed} failed`),
    },
  };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('StoreWatch: every store call has a deadline', () => {
  it('fails a call that gets no answer within the deadline as unavailable, and only that call', async () => {
    let now = 0;
    const { store, waiting } = fakeStore();
    const { told, hooks } = recorder();
    const watch = new StoreWatch({ nowMs: () => now }, 1000, hooks, 2000);
    const watched = watch.wrap(store);
    expect(watched.name).toBe('fake');
    const stuck = watched.stuck();
    const outcome = stuck.then(
      () => 'answered',
      (err: unknown) => (isStoreUnavailable(err) ? `unavailable: ${(err as Error).message}` : 'other'),
    );
    now = 600;
    const answered = watched.write('a');
    expect(watch.pending()).toEqual({ calls: 2, oldestMs: 600 });
    now = 1000;
    watch.check();
    expect(told).toEqual([]);
    now = 1001;
    watch.check();
    expect(await outcome).toBe('unavailable: the database did not answer stuck within 1000 ms');
    expect(told).toEqual(['outage began in stuck: the database did not answer stuck within 1000 ms', 'stalled stuck after 1001 ms, 1 failed']);
    // The younger call is still waiting, and its answer goes through and ends the outage.
    expect(watch.pending()).toEqual({ calls: 1, oldestMs: 401 });
    now = 1500;
    waiting[0]!.resolve('');
    expect(await answered).toBe('wrote a');
    expect(watch.pending().calls).toBe(0);
    // The outage ends once calls have succeeded for the settling time, and lasted to the first of them.
    now = 3499;
    watch.check();
    expect(told).toHaveLength(2);
    now = 3500;
    watch.check();
    expect(told[2]).toBe('outage ended after 499 ms, 1 failed');
  });

  it('tells an outage once when it begins and once when it ends, however many calls fail or succeed in between', async () => {
    let now = 0;
    const { store, waiting } = fakeStore();
    const { told, hooks } = recorder();
    const watch = new StoreWatch({ nowMs: () => now }, 1000, hooks, 5000);
    const watched = watch.wrap(store);
    const write = async (x: string) => {
      const p = watched.write(x);
      waiting.shift()!.resolve('');
      await p;
    };
    for (let i = 0; i < 50; i++) {
      now += 100;
      await expect(watched.down()).rejects.toBeInstanceOf(StoreUnavailableError);
      // A failover: some calls get through while others still fail.
      if (i % 10 === 0) await write(`w${i}`);
      watch.check();
    }
    expect(told).toEqual(['outage began in down: the database is unavailable (ECONNREFUSED)']);
    now = 7_000;
    await write('b');
    now = 11_999;
    await write('c');
    watch.check();
    expect(told).toHaveLength(1);
    now = 12_000;
    watch.check();
    expect(told).toEqual(['outage began in down: the database is unavailable (ECONNREFUSED)', 'outage ended after 6900 ms, 50 failed']);
  });

  it('frees a batcher whose batches in flight never get an answer, so later results are written', async () => {
    let now = 0;
    let stuck = true;
    const calls: string[][] = [];
    const store = {
      completeJobs: (items: string[]): Promise<string[]> => {
        calls.push(items);
        return stuck ? new Promise(() => {}) : Promise.resolve(items.map((i) => `ok ${i}`));
      },
    };
    const { hooks } = recorder();
    const watch = new StoreWatch({ nowMs: () => now }, 1000, hooks);
    const watched = watch.wrap(store);
    const timers = { after: (_ms: number, fn: () => void) => (setTimeout(fn, 0), () => undefined) };
    const batcher = new Batcher(timers, { windowMs: 0, maxBatch: 2, maxInFlight: 2 }, (items: string[]) => watched.completeJobs(items));
    const first = [batcher.submit('j1'), batcher.submit('j2'), batcher.submit('j3'), batcher.submit('j4')].map((p) => p.catch((e: unknown) => e));
    await settle();
    const later = batcher.submit('j5');
    await settle();
    // Both batches in flight are stuck: j5 waits behind them.
    expect(calls).toEqual([
      ['j1', 'j2'],
      ['j3', 'j4'],
    ]);
    stuck = false;
    now = 1001;
    watch.check();
    for (const outcome of await Promise.all(first)) expect(isStoreUnavailable(outcome)).toBe(true);
    expect(await later).toBe('ok j5');
  });
});
