import { describe, expect, it } from 'vitest';
import type { Clock, Timers } from '../src/clock';
import { planDispatch, type DispatchDag } from '../src/fairshare/plan';
import { WorkerPool, type Assignment } from '../src/engine/worker-pool';
import { asDagId, asJobId, asRunId, asWorkerId } from './literal-ids';

/** A clock and timers that move only when the test advances them. */
function fakeTime(): Clock & Timers & { advance(ms: number): void } {
  let now = 1_000_000;
  let timers: { at: number; fn: () => void }[] = [];
  return {
    nowMs: () => now,
    after(ms, fn) {
      const t = { at: now + ms, fn };
      timers.push(t);
      return () => {
        timers = timers.filter((x) => x !== t);
      };
    },
    advance(ms) {
      now += ms;
      const due = timers.filter((t) => t.at <= now);
      timers = timers.filter((t) => t.at > now);
      for (const t of due) t.fn();
    },
  };
}

/** A small seeded generator of integers below n, so a failing case replays. */
function seeded(seed: number): (n: number) => number {
  let state = seed;
  return (n) => {
    state = (Math.imul(state, 1103515245) + 12345) >>> 0;
    return state % n;
  };
}

function job(jobId: string): Assignment {
  return {
    jobId: asJobId(jobId),
    runId: asRunId('1'),
    dagId: asDagId('d'),
    taskId: jobId,
    attempt: 1,
    fence: 1,
    leaseTtlMs: 60_000,
    renewIntervalMs: 20_000,
    task: { type: 'noop', config: {}, timeoutMs: 0, dependsOn: [] },
    params: {},
  };
}

describe('WorkerPool', () => {
  it('keeps a fully busy worker in the pool while it renews or writes results', () => {
    const time = fakeTime();
    const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: () => undefined });
    pool.touch(asWorkerId('busy'), 4);
    pool.touch(asWorkerId('quiet'), 4);
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
    const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: () => undefined });
    void pool.wait({ workerId: asWorkerId('a'), slots: 4, freeSlots: 1, waitMs: 25_000 }, () => undefined);
    pool.touch(asWorkerId('b'), 4);
    expect(pool.waiting().map(({ workerId, free }) => ({ workerId, free }))).toEqual([{ workerId: 'a', free: 1 }]);
    expect(pool.credit('a', 10)).toBe(true);
    expect(pool.waiting().map(({ workerId, free }) => ({ workerId, free }))).toEqual([{ workerId: 'a', free: 4 }]);
    expect(pool.credit('b', 1)).toBe(false);
    expect(pool.settle('a', 0, [job('j0')])).toBe(true);
    expect(pool.waiting()).toEqual([]);
  });

  it('never lists a poll whose client hung up before the wait began, and asks no round for it', async () => {
    const time = fakeTime();
    const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: () => undefined });
    let kicks = 0;
    // The client's close came while the handler checked its session: the cancellation runs at once.
    const gone = pool.wait({ workerId: asWorkerId('gone'), slots: 2, freeSlots: 2, waitMs: 25_000 }, () => kicks++, { onCancel: (fn) => fn() });
    await expect(gone).resolves.toEqual([]);
    expect(pool.isWaiting('gone')).toBe(false);
    expect(pool.waitingIn('default')).toEqual([]);
    expect(kicks).toBe(0);
    // A client still there is listed, and its round asked for.
    void pool.wait({ workerId: asWorkerId('here'), slots: 2, freeSlots: 2, waitMs: 25_000 }, () => kicks++, { onCancel: () => undefined });
    expect(pool.waitingIn('default')).toEqual([{ workerId: 'here', free: 2 }]);
    expect(kicks).toBe(1);
  });

  it('keeps slots reserved by a round out of the next plan, and gives leases that come late to the next poll', async () => {
    const time = fakeTime();
    const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: () => undefined });
    const first = pool.wait({ workerId: asWorkerId('a'), slots: 8, freeSlots: 6, waitMs: 25_000 }, () => undefined);
    // Round 1 plans 4 of the 6 free slots; round 2, planned while round 1 is out, sees 2.
    pool.reserve('a', 4);
    expect(pool.waiting().map(({ workerId, free }) => ({ workerId, free }))).toEqual([{ workerId: 'a', free: 2 }]);
    pool.reserve('a', 2);
    expect(pool.waiting()).toEqual([]);
    // Round 2's grant comes back first and answers the poll; round 1's leases arrive after.
    expect(pool.settle('a', 2, [job('r2-1'), job('r2-2')])).toBe(true);
    expect((await first).map((j) => j.jobId)).toEqual(['r2-1', 'r2-2']);
    expect(pool.settle('a', 4, [job('r1-1'), job('r1-2'), job('r1-3')])).toBe(true);
    // The worker polls again at once and gets them, even with no free slot to offer.
    const second = await pool.wait({ workerId: asWorkerId('a'), slots: 8, freeSlots: 0, waitMs: 25_000 }, () => undefined);
    expect(second.map((j) => j.jobId)).toEqual(['r1-1', 'r1-2', 'r1-3']);
    expect(pool.settle('ghost', 1, [job('x')])).toBe(false);
  });

  it('hands leases back when the worker does not come back for them within the hold', () => {
    const time = fakeTime();
    const unclaimed: string[][] = [];
    const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: (_w, jobs) => unclaimed.push(jobs.map((j) => j.jobId)) });
    pool.touch(asWorkerId('a'), 4);
    pool.reserve('a', 1);
    expect(pool.settle('a', 1, [job('late')])).toBe(true);
    time.advance(4_999);
    expect(unclaimed).toEqual([]);
    time.advance(1);
    expect(unclaimed).toEqual([['late']]);
  });

  it('gives up every waiting lease at once to a node that stops, and none of them again after the hold', () => {
    const time = fakeTime();
    const unclaimed: string[][] = [];
    const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: (_w, jobs) => unclaimed.push(jobs.map((j) => j.jobId)) });
    for (const id of ['a', 'b']) {
      pool.touch(asWorkerId(id), 4);
      pool.reserve(id, 1);
      expect(pool.settle(id, 1, [job(`late-${id}`)])).toBe(true);
    }
    const taken = pool.takeAllOutboxes();
    expect(taken.map((t) => [t.workerId, t.jobs.map((j) => j.jobId)])).toEqual([
      ['a', ['late-a']],
      ['b', ['late-b']],
    ]);
    expect(pool.takeAllOutboxes()).toEqual([]);
    time.advance(10_000);
    expect(unclaimed).toEqual([]);
  });

  it('keeps the pool size equal to a recount of live workers through joins, polls, silence and expiry', () => {
    const next = seeded(777);
    const time = fakeTime();
    const pool = new WorkerPool(time, time, { liveWindowMs: 10_000, outboxHoldMs: 1_000, onUnclaimed: () => undefined });
    const recount = (): number => pool.live().reduce((n, w) => n + w.slots, 0);
    for (let step = 0; step < 3_000; step++) {
      const id = asWorkerId(`w${next(30)}`);
      switch (next(7)) {
        case 0:
          pool.touch(id, 1 + next(8));
          break;
        case 1:
          pool.seen(id);
          break;
        case 2:
          void pool.wait({ workerId: asWorkerId(id), slots: 1 + next(8), freeSlots: next(4), waitMs: 1 + next(20_000) }, () => undefined);
          break;
        case 3:
          pool.cancel(id);
          break;
        case 4:
          pool.expire();
          break;
        default:
          time.advance(next(4_000));
      }
      // Not read after every step, so the pool also meets silence and expiry it has not looked at yet.
      if (next(3) === 0) expect(pool.poolSlots(), `step ${step}`).toBe(recount());
    }
  });

  it('files every waiting worker under its unpromised free slots through polls, credits, reservations and answers', () => {
    const next = seeded(4242);
    const time = fakeTime();
    const pool = new WorkerPool(time, time, { liveWindowMs: 10_000, outboxHoldMs: 1_000, onUnclaimed: () => undefined });
    const sorted = (list: { workerId: string; free: number }[]) => list.map((w) => `${w.workerId}:${w.free}`).sort();
    for (let step = 0; step < 3_000; step++) {
      const id = asWorkerId(`w${next(25)}`);
      // Mostly polls, credits and reservations, so files of many workers build up and
      // workers move between them; answers, hand-ups and time passing take them out.
      const op = next(12);
      if (op < 4) void pool.wait({ workerId: asWorkerId(id), slots: 1 + next(4), freeSlots: next(5), waitMs: 1 + next(60_000) }, () => undefined);
      else if (op < 6) pool.credit(id, next(3));
      else if (op < 8) pool.reserve(id, next(2));
      else if (op < 10) pool.settle(id, next(2), next(6) === 0 ? [job(`j${step}`)] : []);
      else if (op === 10) pool.cancel(id);
      else if (next(3) === 0) pool.forget(id);
      else time.advance(next(2_000));
      const filed = pool.bestWaiting(Number.POSITIVE_INFINITY, step);
      expect(sorted(filed), `step ${step}`).toEqual(sorted(pool.waiting()));
      // Most free first, and each file's ranks 0, 1, 2, ... in the order given.
      for (let i = 1; i < filed.length; i++) {
        const [a, b] = [filed[i - 1]!, filed[i]!];
        expect(a.free > b.free || (a.free === b.free && b.tie === a.tie! + 1)).toBe(true);
      }
    }
  });

  it('picks for a round exactly the workers the planner would take from the whole fleet', () => {
    const next = seeded(12345);
    for (let round = 0; round < 200; round++) {
      const time = fakeTime();
      const pool = new WorkerPool(time, time, { liveWindowMs: 60_000, outboxHoldMs: 5_000, onUnclaimed: () => undefined });
      const fleet = 1 + next(60);
      for (let i = 0; i < fleet; i++) {
        const slots = 1 + next(8);
        void pool.wait({ workerId: asWorkerId(`w${i}`), slots, freeSlots: 1 + next(slots), waitMs: 25_000 }, () => undefined);
        if (next(4) === 0) pool.reserve(`w${i}`, next(3));
      }
      const dags: DispatchDag[] = Array.from({ length: 1 + next(4) }, (_, d) => ({
        dagId: `d${d}`,
        held: next(3),
        ready: Array.from({ length: next(12) }, (_, j) => ({ jobId: `d${d}-${j}`, priority: 0, readyAtMs: j })),
      }));
      const input = { dags, poolSlots: 40, capFraction: 0.5, rotation: round, tieSalt: next(1_000_000) };
      const cap = Math.floor(0.5 * 40);
      const grantable = dags.reduce((n, d) => n + Math.min(d.ready.length, Math.max(0, cap - d.held)), 0);
      const whole = planDispatch({ ...input, workers: pool.bestWaiting(Number.POSITIVE_INFINITY, input.tieSalt) });
      const picked = planDispatch({ ...input, workers: pool.bestWaiting(grantable, input.tieSalt) });
      expect(picked.grants, `case ${round}`).toEqual(whole.grants);
      expect(pool.bestWaiting(grantable, input.tieSalt).length).toBeLessThanOrEqual(grantable);
    }
  });
});
