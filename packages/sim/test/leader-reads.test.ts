import { describe, expect, it } from 'vitest';
import { parseDagId, parseJobId, StoreUnavailableError, type JobId, type JobRow, type Timers } from '@fenceline/core';
import { ShardLeader } from '@fenceline/core/engine';
import { memoryStore, type MemoryStore, type MemoryStoreOptions } from '../src/store/memory-store';

/** The memory store, whose job reads fail with `failWith` while it is set. */
type FailingReads = MemoryStore & { failWith: unknown };

function failingReads(options: MemoryStoreOptions): FailingReads {
  const store = memoryStore(options);
  const failing: FailingReads = {
    ...store,
    failWith: null,
    getJobs: async (jobIds: JobId[]): Promise<JobRow[]> => {
      if (failing.failWith) throw failing.failWith;
      return store.getJobs(jobIds);
    },
  };
  return failing;
}

const timers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};

/** A leader of the only shard, loaded with one running run of one ready job. */
async function leaderWithReadyJob(): Promise<{ store: FailingReads; leader: ShardLeader; jobId: string }> {
  const nowMs = 1_700_000_000_000;
  const store = failingReads({ nowMs: () => nowMs });
  await store.initCluster(1);
  await store.putDag({ id: 'etl', tasks: [{ id: 'a', type: 'noop' }] }, 1);
  const acquired = await store.acquireShard({ shard: 0, nodeId: 'node-1', ttlMs: 60_000 });
  await store.triggerRun(parseDagId('etl'));
  const leader = new ShardLeader({
    store,
    clock: { nowMs: () => nowMs },
    timers,
    token: acquired!.token,
    emit: () => undefined,
    kick: () => undefined,
    onDeposed: () => undefined,
    reconcileAfterMs: 1_000,
  });
  await leader.load();
  const jobId = leader.dispatchView(nowMs)[0]!.ready[0]!.jobId;
  return { store, leader, jobId };
}

describe('a shard leader re-reading jobs', () => {
  it('waits out a store that is unavailable, changing nothing', async () => {
    const { store, leader, jobId } = await leaderWithReadyJob();
    store.failWith = new StoreUnavailableError('no reply within 5000 ms');
    await expect(leader.resyncMany([parseJobId(jobId)])).resolves.toBeUndefined();
    expect(leader.summary()).toEqual({ activeRuns: 1, queuedRuns: 0, ready: 1, leased: 0 });
  });

  it('lets any other error of the read surface', async () => {
    const { store, leader, jobId } = await leaderWithReadyJob();
    store.failWith = new TypeError("Cannot read properties of undefined (reading 'state')");
    await expect(leader.resyncMany([parseJobId(jobId)])).rejects.toThrow(TypeError);
  });
});
