import { parseDagId, parseJobId, parseWorkerId, planTick, type JobId, type RunId } from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { completeJob, createScheduledRuns, finishRun, grantLeases, startRun } from '@fenceline/core/testing';
import { describe, expect, it } from 'vitest';
import { Checker, type InvariantId } from '../src/check/checker';
import { memoryStore, type MemoryStore } from '../src/store/memory-store';
import {
  blindTickStore,
  doubleLeasingStore,
  fenceBlindStore,
  forgetfulFenceStore,
  greedyGrantStore,
  noEpochStore,
  noSweepStore,
  noUniqueRunStore,
  type MakeStore,
} from './broken-stores';

const T0 = Date.parse('2025-01-06T00:00:00.000Z') + 123;
const SHARDS = 1;

/** A store on a hand-driven clock with the checker attached, as the simulator wires them. */
function harness(makeStore: MakeStore, poolSlots = 10) {
  let now = T0;
  const store = makeStore({ nowMs: () => now });
  const checker = new Checker({ failoverBoundMs: 60_000, capFraction: 0.3, poolSlots: () => poolSlots, schedulersImpaired: () => false });
  store.observe((w) => checker.observe(w));
  const advance = (ms: number): void => {
    now += ms;
    checker.afterEvent(now);
  };
  return { store, checker, advance, now: () => now };
}

async function leadAndStart(store: MemoryStore, tasks = 1, nodeId = 'node-a', ttlMs = 60_000): Promise<{ token: LeaderToken; jobIds: JobId[]; runId: RunId }> {
  await store.initCluster(SHARDS);
  const got = await store.acquireShard({ shard: 0, nodeId, ttlMs });
  const token = got!.token;
  await store.putDag({ id: 'd', tasks: Array.from({ length: tasks }, (_, k) => ({ id: `t${k}`, type: 'noop' })) }, SHARDS);
  const run = await store.triggerRun(parseDagId('d'));
  const jobs = await startRun(
    store,
    token,
    run.id,
    Array.from({ length: tasks }, (_, k) => ({
      taskId: `t${k}`,
      state: 'ready' as const,
      maxAttempts: 3,
      priority: 0,
      retryBackoffMs: 0,
      retryBackoffMaxMs: 0,
      timeoutMs: 60_000,
    })),
  );
  return { token, jobIds: jobs.map((j) => j.id), runId: run.id };
}

const fired = (checker: Checker): InvariantId[] => [...new Set(checker.violations.map((v) => v.invariant))];

/** Each script is the same story told to a healthy store (no violation) and to a broken one (the named violation). */
const scripts: { invariant: InvariantId; broken: MakeStore; story: (h: ReturnType<typeof harness>) => Promise<void> }[] = [
  {
    invariant: 'I1',
    broken: doubleLeasingStore,
    story: async ({ store }) => {
      const { token, jobIds } = await leadAndStart(store);
      await grantLeases(store, token, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('w1') }], 90_000);
      await grantLeases(store, token, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('w2') }], 90_000);
    },
  },
  {
    invariant: 'I2',
    broken: forgetfulFenceStore,
    story: async ({ store, advance }) => {
      const { token, jobIds } = await leadAndStart(store);
      await grantLeases(store, token, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('w1') }], 1_000);
      advance(2_000);
      await store.sweepExpired(token, 10);
    },
  },
  {
    invariant: 'I3',
    broken: fenceBlindStore,
    story: async ({ store }) => {
      const { token, jobIds } = await leadAndStart(store);
      const [lease] = await grantLeases(store, token, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('w1') }], 90_000);
      await completeJob(store, { jobId: parseJobId(jobIds[0]!), fence: lease!.fence - 1, workerId: parseWorkerId('w1'), session: null }, { output: 'stale' }).catch(
        () => undefined,
      );
    },
  },
  {
    invariant: 'I4',
    broken: noUniqueRunStore,
    story: async ({ store }) => {
      await leadAndStart(store);
      // Two triggers in one millisecond; the unique index must turn the second into a new slot.
      await store.triggerRun(parseDagId('d'));
      await store.triggerRun(parseDagId('d')).catch(() => undefined);
    },
  },
  {
    invariant: 'I5',
    broken: blindTickStore,
    story: async ({ store, checker, advance, now }) => {
      await store.initCluster(SHARDS);
      const token = (await store.acquireShard({ shard: 0, nodeId: 'node-a', ttlMs: 3_600_000 }))!.token;
      await store.putDag({ id: 'every-minute', schedule: { kind: 'interval', everyMs: 60_000 }, tasks: [{ id: 't', type: 'noop' }] }, SHARDS);
      const dag = await store.getDag(parseDagId('every-minute'));
      checker.registerDag(dag.id, dag.spec.schedule, undefined, dag.nextRunAt!.getTime());
      // A leader ticking every second for five minutes, with the production tick planner.
      for (let s = 0; s < 300; s++) {
        advance(1_000);
        const { dags } = await store.dueDags([token], 100);
        for (const due of dags) {
          const plan = planTick({ schedule: due.spec.schedule, catchup: due.spec.catchup, nextRunAtMs: due.nextRunAt.getTime(), nowMs: now() });
          await createScheduledRuns(
            store,
            token,
            due.id,
            due.nextRunAt,
            plan.slotsMs.map((m) => new Date(m)),
            plan.nextRunAtMs === null ? null : new Date(plan.nextRunAtMs),
          );
        }
      }
    },
  },
  {
    invariant: 'I6',
    broken: greedyGrantStore,
    story: async ({ store }) => {
      // Pool of 10 slots, cap 30%: the DAG may hold 3 leases; the leader asks for 1.
      const { token, jobIds } = await leadAndStart(store, 8);
      await grantLeases(store, token, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('w1') }], 90_000);
    },
  },
  {
    invariant: 'I7',
    broken: noSweepStore,
    story: async ({ store, checker, advance, now }) => {
      const { token, jobIds, runId } = await leadAndStart(store);
      await grantLeases(store, token, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('crashed') }], 1_000);
      advance(5_000);
      // Faults stop here. A healthy leader sweeps, re-leases to a live worker, and finishes.
      const faultsEnded = now();
      for (const s of await store.sweepExpired(token, 10)) {
        const [lease] = await grantLeases(store, token, [{ jobId: s.jobId, workerId: parseWorkerId('alive') }], 90_000);
        await completeJob(store, { jobId: s.jobId, fence: lease!.fence, workerId: parseWorkerId('alive'), session: null }, {});
        await finishRun(store, token, runId, 'succeeded');
      }
      advance(600_000);
      checker.checkQuiescent(store, faultsEnded, now());
    },
  },
  {
    invariant: 'I8',
    broken: noEpochStore,
    story: async ({ store, advance }) => {
      const { token: old, jobIds } = await leadAndStart(store, 1, 'node-a', 1_000);
      advance(2_000);
      await store.acquireShard({ shard: 0, nodeId: 'node-b', ttlMs: 60_000 });
      await grantLeases(store, old, [{ jobId: parseJobId(jobIds[0]!), workerId: parseWorkerId('w1') }], 90_000).catch(() => undefined);
    },
  },
];

describe('Invariant checker: each check fires on a store that breaks its rule', () => {
  for (const { invariant, broken, story } of scripts) {
    it(`${invariant}: a healthy store keeps it through the story`, async () => {
      const h = harness(memoryStore);
      await story(h);
      expect(h.checker.violations).toEqual([]);
    });
    it(`${invariant}: ${broken.name} breaks it and the checker says so`, async () => {
      const h = harness(broken);
      await story(h);
      expect(fired(h.checker)).toContain(invariant);
    });
  }
});

describe('Invariant checker: I5 does not count time in which no scheduler could work', () => {
  /** A checker watching one DAG's slot at T0, with the schedulers impaired in the given stretches (ms after T0). */
  function watched(outages: [number, number][]) {
    let now = T0;
    const impaired = (): boolean => outages.some(([from, to]) => now - T0 >= from && now - T0 < to);
    const checker = new Checker({ failoverBoundMs: 60_000, capFraction: 0.3, poolSlots: () => 10, schedulersImpaired: impaired });
    checker.registerDag('d', { kind: 'interval', everyMs: 3_600_000 }, undefined, T0);
    /** Steps the clock 100 ms at a time up to `ms` after T0; true once I5 fired. */
    const runTo = (ms: number): boolean => {
      while (now - T0 < ms) {
        now += 100;
        checker.afterEvent(now);
      }
      return checker.violations.some((v) => v.invariant === 'I5');
    };
    return runTo;
  }

  it('fails a slot with no run one bound after it was due when the schedulers could work throughout', () => {
    const runTo = watched([]);
    expect(runTo(60_000)).toBe(false);
    expect(runTo(60_200)).toBe(true);
  });

  it('moves the deadline past outages that ended before it, as two store failovers in a row', () => {
    // Impaired 23 s, able to work 7 s, impaired 27 s, then able again: 50 s of the bound lost.
    const runTo = watched([
      [0, 23_000],
      [30_000, 57_000],
    ]);
    expect(runTo(109_900)).toBe(false);
    expect(runTo(110_300)).toBe(true);
  });

  it('gives a full bound again after an outage still going on at the deadline', () => {
    const runTo = watched([[50_000, 70_000]]);
    // At the deadline (60 s) no scheduler can work: the slot is judged a bound later.
    expect(runTo(120_000)).toBe(false);
    expect(runTo(200_000)).toBe(true);
  });
});
