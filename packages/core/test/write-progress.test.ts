import { describe, expect, it } from 'vitest';
import { WriteProgress } from '../src/engine/write-progress';
import { StoreUnavailableError } from '../src/unavailable';

function watch(windowMs = 1000) {
  const clock = { now: 0, nowMs: () => clock.now };
  const told: string[] = [];
  const progress = new WriteProgress(clock, windowMs, {
    stalled: (ms, waiting) => told.push(`stalled ${ms} ms, ${waiting} waiting`),
    stillStalled: (ms, waiting) => told.push(`still stalled ${ms} ms, ${waiting} waiting`),
    progressed: (ms) => told.push(`progressed after ${ms} ms`),
  });
  return { clock, told, progress };
}

const settle = async () => {
  for (let i = 0; i < 10; i++) await Promise.resolve();
};

/** Runs check at every step of `stepMs` until `untilMs`. */
function checkUntil(w: ReturnType<typeof watch>, untilMs: number, stepMs = 100): void {
  while (w.clock.now < untilMs) {
    w.clock.now = Math.min(untilMs, w.clock.now + stepMs);
    w.progress.check();
  }
}

describe('WriteProgress: the result-write path must move while results wait', () => {
  it('reports a write that hangs once at the window, escalates once a window later, and clears on the next answer', async () => {
    const w = watch();
    let answer: (v: string) => void = () => {};
    const hung = w.progress.track(3, () => new Promise<string>((resolve) => (answer = resolve)));
    checkUntil(w, 999);
    expect(w.told).toEqual([]);
    checkUntil(w, 1000, 1);
    checkUntil(w, 5000);
    expect(w.told).toEqual(['stalled 1000 ms, 3 waiting', 'still stalled 2000 ms, 3 waiting']);
    expect(w.progress.stalled).toBe(true);
    // For one window after giving up its shards the node takes none.
    expect(w.progress.standingAside()).toBe(false);
    answer('ok');
    expect(await hung).toBe('ok');
    expect(w.told.at(-1)).toBe('progressed after 5000 ms');
    expect(w.progress.stalled).toBe(false);
    checkUntil(w, 9000);
    expect(w.told).toHaveLength(3);
  });

  it('stands aside for exactly one window after giving up', () => {
    const w = watch();
    void w.progress.track(1, () => new Promise(() => {}));
    checkUntil(w, 2000);
    expect(w.told).toEqual(['stalled 1000 ms, 1 waiting', 'still stalled 2000 ms, 1 waiting']);
    expect(w.progress.standingAside()).toBe(true);
    w.clock.now = 2999;
    expect(w.progress.standingAside()).toBe(true);
    w.clock.now = 3000;
    expect(w.progress.standingAside()).toBe(false);
  });

  it('counts writes that fail at once, again and again, as no progress', async () => {
    const w = watch();
    const failing = () => Promise.reject(new StoreUnavailableError('cannot execute UPDATE in a read-only transaction'));
    // A worker sends, is refused at once, and sends again every 200 ms.
    while (w.clock.now < 1500) {
      await w.progress.track(2, failing).catch(() => undefined);
      w.clock.now += 200;
      w.progress.check();
    }
    // The send at 1000 ms made a whole window of failures; the check after it reports them.
    expect(w.told).toEqual(['stalled 1200 ms, 0 waiting']);
    await w.progress.track(2, () => Promise.resolve('written'));
    expect(w.told).toEqual(['stalled 1200 ms, 0 waiting', 'progressed after 1600 ms']);
  });

  it('counts a refusal the store answered as progress', async () => {
    const w = watch();
    for (let i = 0; i < 20; i++) {
      await w.progress.track(1, () => Promise.resolve([{ ok: false, code: 'LEASE_LOST' }]));
      w.clock.now += 200;
      w.progress.check();
    }
    expect(w.told).toEqual([]);
  });

  it('says nothing of failures that stopped within the window (an outage that passed)', async () => {
    const w = watch();
    const down = () => Promise.reject(new StoreUnavailableError('the database is unavailable (ECONNREFUSED)'));
    while (w.clock.now < 900) {
      await w.progress.track(1, down).catch(() => undefined);
      w.clock.now += 100;
      w.progress.check();
    }
    checkUntil(w, 5000);
    expect(w.told).toEqual([]);
  });

  it('says nothing when the failed results went to another node and nothing waits here', async () => {
    const w = watch();
    await w.progress.track(1, () => Promise.reject(new Error('refused'))).catch(() => undefined);
    checkUntil(w, 10_000);
    expect(w.told).toEqual([]);
    // A later result starts a fresh window rather than counting from the old failure.
    const later = w.progress.track(1, () => new Promise(() => {}));
    void later;
    const from = w.clock.now;
    checkUntil(w, from + 900);
    expect(w.told).toEqual([]);
    checkUntil(w, from + 1000);
    expect(w.told).toEqual(['stalled 1000 ms, 1 waiting']);
    await settle();
  });
});
