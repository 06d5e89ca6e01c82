import { DeposedLeaderError } from '@fenceline/core';
import { type Grant } from '@fenceline/core/store';
import { memoryStore, type MemoryStore, type MemoryStoreOptions } from '../src/store/memory-store';

/**
 * Stores that each break exactly one rule the design depends on. The invariant tests run
 * them to show the checker notices: a check that never fires proves nothing.
 */
export type MakeStore = (options: MemoryStoreOptions) => MemoryStore;

/** I1: grants a lease even while another worker holds a live one. */
export const doubleLeasingStore: MakeStore = (o) =>
  memoryStore({ ...o, rules: (standard) => ({ grantable: (job, nowMs) => standard.grantable(job, nowMs) || job.state === 'leased' }) });

/** I2: revokes an expired lease (or takes a hand-back) without raising the fence. */
export const forgetfulFenceStore: MakeStore = (o) => memoryStore({ ...o, rules: () => ({ revokedFence: (fence) => fence }) });

/** I3: accepts a worker's write whatever fence it carries, as long as the holder matches. */
export const fenceBlindStore: MakeStore = (o) =>
  memoryStore({ ...o, rules: (standard) => ({ fenceAccepts: (job, ref, nowMs) => job.holder === ref.workerId || standard.fenceAccepts(job, ref, nowMs) }) });

/** I4: has no unique index on (dag_id, scheduled_at). */
export const noUniqueRunStore: MakeStore = (o) => memoryStore({ ...o, rules: () => ({ slotTaken: () => false }) });

/** I5: its due-DAG query never finds the DAGs of shard 0. */
export const blindTickStore: MakeStore = (o) => {
  const store = memoryStore(o);
  return {
    ...store,
    dueDags: async (tokens, limit, after, options) => {
      const result = await store.dueDags(tokens, limit, after, options);
      return { now: result.now, dags: result.dags.filter((d) => d.shard !== 0) };
    },
  };
};

/** I6: a grant leases every ready job of the DAG to the named workers, cap or no cap. */
export const greedyGrantStore: MakeStore = (o) => {
  const store = memoryStore(o);
  return {
    ...store,
    grantLeasesMany: async (items, ttlMs) => {
      const out = await store.grantLeasesMany(items, ttlMs);
      for (const [i, granted] of out.entries()) {
        if (granted instanceof DeposedLeaderError || granted.length === 0) continue;
        const dagId = granted[0]!.dagId;
        const extra: Grant[] = [];
        for (const job of store.allJobs()) if (job.dagId === dagId && job.state === 'ready') extra.push({ jobId: job.id, workerId: granted[0]!.workerId });
        await store.grantLeasesMany([{ token: items[i]!.token, grants: extra }], ttlMs);
      }
      return out;
    },
  };
};

/** I7: never revokes an expired lease, so a crashed worker's job is lost for good. */
export const noSweepStore: MakeStore = (o) => ({ ...memoryStore(o), sweepExpired: async () => [] });

/** I8: lets any node write as a shard's leader, deposed or not. */
export const noEpochStore: MakeStore = (o) => memoryStore({ ...o, rules: () => ({ leads: () => true }) });
