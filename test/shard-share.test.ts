import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, shardOf } from '@fenceline/core';
import { sleep } from '../tools/start/cluster';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

/** The fixture fixes the cluster's shard count at FAST_ENV's before any node starts. */
const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

/** Shard holders by node, counting only live leases. */
async function holders(f: Fixture): Promise<Map<string, number[]>> {
  const now = (await f.store.now()).getTime();
  const out = new Map<string, number[]>();
  for (const s of await f.store.listShards()) {
    if (!s.holder || !s.expiresAt || s.expiresAt.getTime() <= now) continue;
    out.set(s.holder, [...(out.get(s.holder) ?? []), s.shard]);
  }
  return out;
}

/** A DAG id that lands in the given shard. */
function dagIn(shard: number, prefix: string): string {
  for (let k = 0; ; k++) if (shardOf(`${prefix}-${k}`, SHARDS) === shard) return `${prefix}-${k}`;
}

/**
 * Scheduler nodes share the shards out: a node that joins takes its share from the node
 * that led everything, the runs of every shard go on across the hand-off, and a node that
 * stops gives its shards back to the others at once.
 */
describe('cluster: scheduler nodes share the shards', () => {
  let f: Fixture;
  beforeAll(async () => {
    // Sharing is off by default. The nodes start one after the other, so the first leads
    // every shard before the second is up; the worker polls both.
    f = await startFixture({ schedulers: 2, workers: 1, env: { ...FAST_ENV, FENCELINE_SHARE_SHARDS: 'on' } });
  }, 60_000);
  afterAll(async () => f?.stop());

  it('a joining node takes half the shards, every shard runs its jobs, and a stopped node hands its shards back', async () => {
    const shared = await eventually(
      'the shards to be shared half and half',
      async () => {
        const h = await holders(f);
        return h.get('scheduler-1')?.length === SHARDS / 2 && h.get('scheduler-2')?.length === SHARDS / 2 ? h : null;
      },
      30_000,
    );
    const all = [...shared.get('scheduler-1')!, ...shared.get('scheduler-2')!].sort((a, b) => a - b);
    expect(all).toEqual(Array.from({ length: SHARDS }, (_, i) => i));
    // Nodes write their events in batches every half second or so, so one hand-off can be
    // in the store before the next: wait until as many are logged as scheduler-2 took.
    const taken = [...shared.get('scheduler-2')!].sort();
    const handedOff = await eventually(
      'scheduler-1 to log its hand-offs',
      async () => {
        const released = await f.store.listEvents({ type: 'leader:released', limit: 100 });
        const mine = released.filter((e) => e.nodeId === 'scheduler-1' && (e.data as { reason?: string }).reason === 'share');
        return mine.length >= taken.length ? mine : null;
      },
      10_000,
    );
    expect(handedOff.map((e) => e.shard).sort()).toEqual(taken);

    // One DAG in every shard: each node runs the runs of the shards it now leads.
    const ids = Array.from({ length: SHARDS }, (_, shard) => dagIn(shard, 'shared'));
    // Forty jobs each, through a worker of four slots: both nodes keep filling its slots at
    // once, the race in which a worker that cut one node's poll lost the answer on the wire.
    const tasks = Array.from({ length: 40 }, (_, k) => ({ id: `t${k}`, type: 'noop' }));
    for (const id of ids) await f.store.putDag({ id, tasks }, SHARDS);
    for (const id of ids) await f.store.triggerRun(parseDagId(id));
    await eventually(
      'a run of every shard to succeed',
      async () => {
        const states: string[] = [];
        for (const id of ids) {
          const [run] = await f.store.listRuns({ dagId: parseDagId(id), limit: 1 });
          states.push(run?.state ?? 'none');
        }
        return states.every((st) => st === 'succeeded') ? states : null;
      },
      30_000,
    );
    // No answer was lost: no lease ran out unrun. (A lease handed back at once, when both
    // nodes filled the same free slot, is fine.) The nodes write their events within a second.
    await sleep(1_500);
    const expired = await f.store.listEvents({ type: 'lease:expired', limit: 500 });
    expect(expired.filter((e) => e.dagId && ids.includes(e.dagId)).map((e) => `${e.dagId} job ${e.jobId}`)).toEqual([]);
    for (const id of ids) {
      const [run] = await f.store.listRuns({ dagId: parseDagId(id), limit: 1 });
      expect(await f.store.listJobs(run!.id)).toHaveLength(40);
    }
    await eventually(
      'both nodes to have started runs',
      async () => {
        const started = await f.store.listEvents({ type: 'run:started', limit: 100 });
        const by = new Set(started.filter((e) => e.dagId && ids.includes(e.dagId)).map((e) => e.nodeId));
        return by.has('scheduler-1') && by.has('scheduler-2') && by.size === 2;
      },
      10_000,
    );

    // A graceful stop leaves the cluster first, so the other node takes every shard on its
    // next tick rather than after the shard lease TTL.
    const stoppedAt = Date.now();
    f.cluster.signal('scheduler-2', 'SIGTERM');
    await eventually('scheduler-1 to lead every shard again', async () => (await holders(f)).get('scheduler-1')?.length === SHARDS, 20_000, 50);
    const takeoverMs = Date.now() - stoppedAt;
    expect(takeoverMs).toBeLessThan(Number(FAST_ENV.FENCELINE_SHARD_LEASE_TTL_MS));
  }, 120_000);
});
