import { afterEach, describe, expect, it } from 'vitest';
import { parseDagId, parseWorkerId, type BackfillRow, type Timers } from '@fenceline/core';
import { SchedulerNode } from '@fenceline/core/engine';
import { memoryStore, type MemoryStore } from '../src/store/memory-store';

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

const timers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};

async function until(what: string, check: () => Promise<boolean> | boolean, withinMs = 20_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const nodes: SchedulerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

/**
 * A memory store on a clock that can be set back, and an hourly DAG of one task stored 30
 * days ago: its schedule is due for every hour since, and with catch-up `all` the first
 * tick creates those runs itself.
 */
async function hourlyDagDue30Days(maxActiveRuns: number) {
  let offsetMs = -30 * DAY_MS;
  const clock = { nowMs: () => Date.now() + offsetMs };
  const store = memoryStore({ nowMs: clock.nowMs });
  await store.initCluster(1);
  const dagId = parseDagId('hourly');
  await store.putDag(
    {
      id: dagId,
      schedule: { kind: 'interval', everyMs: HOUR_MS },
      catchup: { policy: 'all', windowMs: 30 * DAY_MS },
      maxActiveRuns: 100,
      capFraction: 1,
      tasks: [{ id: 'a', type: 'noop' }],
    },
    1,
  );
  const from = (await store.getDag(dagId)).nextRunAt!;
  offsetMs = 0;
  const backfill = await store.createBackfill({ dagId, from, to: new Date(from.getTime() + 30 * DAY_MS), maxActiveRuns, confirm: true, requestedBy: 'ops' });
  return { store, clock, dagId, backfill };
}

/** A started node with a worker of its own that completes every job it is handed, until the node stops. */
async function startNode(store: MemoryStore, clock: { nowMs: () => number }, nodeId: string): Promise<SchedulerNode> {
  const node = new SchedulerNode({ nodeId, store, clock, timers, config: { shardCount: 1, tickIntervalMs: 20, shardLeaseTtlMs: 2_000, shardRenewIntervalMs: 500 } });
  nodes.push(node);
  await node.start();
  const worker = { workerId: parseWorkerId(`${nodeId}-worker`), session: `${nodeId}-session` };
  await node.protocol.register({ ...worker, slots: 20, credentialId: null });
  void (async () => {
    let stopped = false;
    while (!stopped) {
      const jobs = await node.protocol.poll({ ...worker, slots: 20, freeSlots: 20, waitMs: 100 }).catch(() => null);
      if (jobs === null) stopped = true;
      else await Promise.all(jobs.map((j) => node.protocol.complete({ ...worker, jobId: j.jobId, fence: j.fence }).catch(() => undefined)));
      if (!nodes.includes(node)) stopped = true;
    }
  })();
  return node;
}

async function expectOneRunPerSlot(store: MemoryStore, backfill: BackfillRow): Promise<void> {
  const runs = [...store.allRuns()].filter((r) => r.dagId === backfill.dagId && r.scheduledAtMs >= backfill.fromAt.getTime() && r.scheduledAtMs < backfill.toAt.getTime());
  expect(runs).toHaveLength(720);
  expect(new Set(runs.map((r) => r.scheduledAtMs)).size).toBe(720);
  const done = await store.getBackfill(backfill.id);
  expect(done).toMatchObject({ state: 'done', totalSlots: 720, activeRuns: 0 });
  expect(done.createdRuns + done.skippedSlots).toBe(720);
  expect(done.finishedRuns).toBe(done.createdRuns);
}

describe('a shard leader running a backfill', () => {
  it('makes one run per slot of 30 days of an hourly DAG while the DAG\u2019s own tick catches up the same slots', async () => {
    const { store, clock, backfill } = await hourlyDagDue30Days(50);
    expect(backfill.totalSlots).toBe(720);
    await startNode(store, clock, 'node-1');
    await until('the backfill to finish', async () => (await store.getBackfill(backfill.id)).state === 'done');
    await expectOneRunPerSlot(store, backfill);
    // Events reach the store's log at the node's next flush.
    await until('the backfill:done event', async () => (await store.listEvents({ type: 'backfill:done', limit: 10 })).length > 0);
    expect((await store.listEvents({ type: 'backfill:done', limit: 10 })).map((e) => e.data.backfillId)).toEqual([backfill.id]);
    expect((await store.listEvents({ type: 'backfill:started', limit: 10 })).map((e) => e.data)).toEqual([
      { backfillId: backfill.id, totalSlots: 720, maxActiveRuns: 50, requestedBy: 'ops' },
    ]);
  });

  it('keeps at most its max active runs unfinished', async () => {
    const { store, clock, dagId } = await hourlyDagDue30Days(3);
    // Paused, the DAG's runs are still started, but its schedule creates none: every run here is the backfill's.
    await store.setPaused(dagId, true);
    const b = (await store.listBackfills({ dagId }))[0]!;
    let most = 0;
    const node = await startNode(store, clock, 'node-1');
    await until('the backfill to finish', async () => {
      const row = await store.getBackfill(b.id);
      most = Math.max(most, row.activeRuns);
      return row.state === 'done';
    });
    expect(node.ledShards()).toEqual([0]);
    expect(most).toBeLessThanOrEqual(3);
    const done = await store.getBackfill(b.id);
    expect(done).toMatchObject({ createdRuns: 720, skippedSlots: 0 });
  });

  it('goes on from the slot it reached under a new leader after its leader stops', async () => {
    const { store, clock, dagId, backfill } = await hourlyDagDue30Days(2);
    await store.setPaused(dagId, true);
    const first = await startNode(store, clock, 'node-1');
    await until('a part of the backfill', async () => (await store.getBackfill(backfill.id)).createdRuns >= 100);
    await first.stop();
    const reached = await store.getBackfill(backfill.id);
    expect(reached.state).toBe('running');
    await startNode(store, clock, 'node-2');
    await until('the backfill to finish', async () => (await store.getBackfill(backfill.id)).state === 'done');
    await expectOneRunPerSlot(store, backfill);
    expect((await store.getBackfill(backfill.id)).createdRuns).toBe(720);
  });

  it('cancelled, creates no more runs and ends its queued runs cancelled', async () => {
    const { store, clock, dagId, backfill } = await hourlyDagDue30Days(5);
    await store.setPaused(dagId, true);
    await startNode(store, clock, 'node-1');
    await until('a part of the backfill', async () => (await store.getBackfill(backfill.id)).createdRuns >= 20);
    await store.cancelBackfill(backfill.id);
    await until('the backfill to be settled', async () => (await store.getBackfill(backfill.id)).endedAt !== null);
    const settled = await store.getBackfill(backfill.id);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const later = await store.getBackfill(backfill.id);
    expect(later).toMatchObject({ state: 'cancelled', createdRuns: settled.createdRuns, activeRuns: 0 });
    expect(later.createdRuns).toBeLessThan(720);
    const runs = [...store.allRuns()].filter((r) => r.dagId === dagId);
    expect(runs.every((r) => r.state === 'succeeded' || r.state === 'cancelled')).toBe(true);
    await until('the backfill:cancelled event', async () => (await store.listEvents({ type: 'backfill:cancelled', limit: 10 })).length > 0);
    expect((await store.listEvents({ type: 'backfill:cancelled', limit: 10 })).map((e) => e.data.backfillId)).toEqual([backfill.id]);
  });
});
