import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWorkerId, initialJobs, parseDagId, parseDagSpec, type DagSpecInput, type RunId } from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { completeJob, grantLeases, startRun } from '@fenceline/core/testing';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { Cluster } from '../tools/start/cluster';
import { ADMIN_URL, eventually, FAST_ENV } from './support/cluster-fixture';
import { registerSecret, runLogFile } from './support/run-logs';

/**
 * A leader can die between any two steps of a multi-step operation. Each case below plays
 * a leader up to some step directly against the store, "dies" there (its shard lease is
 * released, as a crash would let it expire), and then starts a real cluster: whatever was
 * acknowledged must survive and every run must still end.
 */
const SHARDS = 4;

describe('crash safety: a leader that died between steps', () => {
  let store: SqlStore;
  let databaseUrl: string;
  const name = `fenceline_crash_${randomBytes(4).toString('hex')}`;

  beforeAll(async () => {
    databaseUrl = await createDatabase(ADMIN_URL, name);
    store = await openStore({ databaseUrl, applicationName: 'fenceline-crash-test', max: 4 });
    await store.initCluster(SHARDS);
  });
  afterAll(async () => {
    await store?.close();
    await dropDatabase(ADMIN_URL, name).catch(() => undefined);
  });

  async function put(spec: DagSpecInput): Promise<number> {
    await store.putDag(spec, SHARDS);
    return (await store.getDag(parseDagId(spec.id))).shard;
  }

  async function crashedLeader(shard: number): Promise<LeaderToken> {
    const got = await store.acquireShard({ shard, nodeId: 'crashed-node', ttlMs: 60_000 });
    if (!got) throw new Error(`shard ${shard} is held`);
    return got.token;
  }

  /** The crashed node's token for a shard: the one it already holds, or a new one. */
  async function crashedLeaderOf(shard: number): Promise<LeaderToken> {
    const row = (await store.listShards()).find((s) => s.shard === shard);
    return row?.holder === 'crashed-node' ? { shard, nodeId: 'crashed-node', epoch: row.epoch } : crashedLeader(shard);
  }

  it('recovers runs left queued, half-promoted, half-failed and with an undelivered lease, and loses nothing acknowledged', async () => {
    // Case 1: the tick created the run (acknowledged) but the leader died before starting it.
    const queuedShard = await put({
      id: 'crash-queued',
      tasks: [
        { id: 'a', type: 'noop' },
        { id: 'b', type: 'noop', dependsOn: ['a'] },
      ],
    });
    const queued = await store.triggerRun(parseDagId('crash-queued'));

    // Case 2: a job's success was accepted, but the leader died before promoting its dependents.
    const promoteSpec: DagSpecInput = {
      id: 'crash-promote',
      tasks: [
        { id: 'first', type: 'noop' },
        { id: 'second', type: 'noop', dependsOn: ['first'] },
        { id: 'third', type: 'noop', dependsOn: ['second'] },
      ],
    };
    const promoteShard = await put(promoteSpec);
    const promoteToken = await crashedLeader(promoteShard);
    const promoteRun = await store.triggerRun(parseDagId('crash-promote'));
    const promoteJobs = await startRun(store, promoteToken, promoteRun.id, initialJobs(parseDagSpec(promoteSpec)));
    const first = promoteJobs.find((j) => j.taskId === 'first')!;
    const [lease] = await grantLeases(store, promoteToken, [{ jobId: first.id, workerId: parseWorkerId('ghost-worker') }], 60_000);
    await completeJob(store, { jobId: first.id, fence: lease!.fence, workerId: parseWorkerId('ghost-worker'), session: null }, { output: { acknowledged: true } });
    if (promoteShard !== queuedShard) await store.releaseShard(promoteToken);

    // Case 3: a job failed for good, but the leader died before marking its downstream.
    const failSpec: DagSpecInput = {
      id: 'crash-fail',
      tasks: [
        { id: 'doomed', type: 'noop' },
        { id: 'after', type: 'noop', dependsOn: ['doomed'] },
      ],
    };
    const failShard = await put(failSpec);
    const failToken = failShard === promoteShard ? promoteToken : await crashedLeader(failShard);
    const failRun = await store.triggerRun(parseDagId('crash-fail'));
    const failJobs = await startRun(store, failToken, failRun.id, initialJobs(parseDagSpec(failSpec)));
    const doomed = failJobs.find((j) => j.taskId === 'doomed')!;
    const [failLease] = await grantLeases(store, failToken, [{ jobId: doomed.id, workerId: parseWorkerId('ghost-worker') }], 60_000);
    await store.failJob({ jobId: doomed.id, fence: failLease!.fence, workerId: parseWorkerId('ghost-worker'), session: null }, { error: 'boom', retryable: false });

    // Case 4: a lease was granted, but the leader died before delivering it to its worker.
    // The job has no retries: the lost lease must not use up its only attempt.
    const lostSpec: DagSpecInput = { id: 'crash-undelivered', tasks: [{ id: 'only', type: 'noop' }] };
    const lostShard = await put(lostSpec);
    const lostToken = await crashedLeaderOf(lostShard);
    const lostRun = await store.triggerRun(parseDagId('crash-undelivered'));
    const [lostJob] = await startRun(store, lostToken, lostRun.id, initialJobs(parseDagSpec(lostSpec)));
    const [lostLease] = await grantLeases(store, lostToken, [{ jobId: lostJob!.id, workerId: parseWorkerId('worker-1') }], Number(FAST_ENV.FENCELINE_LEASE_TTL_MS));
    expect(lostLease).toMatchObject({ attempt: 1 });

    // The crashed node's leases are let go (as expiry would), and a real cluster takes over.
    for (const s of await store.listShards()) if (s.holder === 'crashed-node') await store.releaseShard({ shard: s.shard, nodeId: 'crashed-node', epoch: s.epoch });
    const cluster = new Cluster({
      tee: runLogFile,
      databaseUrl,
      workerToken: randomBytes(18).toString('base64url'),
      schedulers: 1,
      workers: 1,
      basePort: 17300 + Math.floor(Math.random() * 90),
      output: process.env.FENCELINE_TEST_VERBOSE ? 'prefixed' : 'quiet',
      env: FAST_ENV,
    });
    registerSecret("a test cluster's worker token", cluster.opts.workerToken);
    try {
      await cluster.start();
      const ended = async (runId: RunId) => {
        const run = await store.getRun(runId);
        return run.state === 'succeeded' || run.state === 'failed' ? run : null;
      };
      expect((await eventually('the queued run to finish', () => ended(queued.id), 30_000)).state).toBe('succeeded');
      expect((await eventually('the half-promoted run to finish', () => ended(promoteRun.id), 30_000)).state).toBe('succeeded');
      expect((await eventually('the half-failed run to finish', () => ended(failRun.id), 30_000)).state).toBe('failed');
      expect((await eventually('the run whose lease was never delivered to finish', () => ended(lostRun.id), 30_000)).state).toBe('succeeded');
    } finally {
      await cluster.stop(5000);
    }
    // The acknowledged result is still the one the ghost worker wrote, under its fence.
    expect(await store.getResult(first.id)).toMatchObject({ workerId: 'ghost-worker', fence: lease!.fence, output: { acknowledged: true } });
    const after = (await store.listJobs(failRun.id)).find((j) => j.taskId === 'after')!;
    expect(after.state).toBe('upstream_failed');
    expect((await store.listJobs(promoteRun.id)).map((j) => j.state)).toEqual(['succeeded', 'succeeded', 'succeeded']);
    // The undelivered lease expired unrenewed: revoked (fence + 1) without counting, then
    // granted again as attempt 1, whose result is the one on record.
    const rerun = await store.getJob(lostJob!.id);
    expect(rerun).toMatchObject({ state: 'succeeded', attempt: 1, fence: lostLease!.fence + 2 });
    expect(await store.getResult(lostJob!.id)).toMatchObject({ workerId: 'worker-1', fence: lostLease!.fence + 2 });
    const expired = await store.listEvents({ jobId: lostJob!.id, type: 'lease:expired' });
    expect(expired.map((e) => e.data)).toEqual([expect.objectContaining({ state: 'ready', attemptCounted: false })]);
  });
});
