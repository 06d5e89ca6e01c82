import {
  DeposedLeaderError,
  type DueDag,
  type DuePageKey,
  type DueReadOptions,
  type Grant,
  type GrantedLease,
  type LeaderToken,
  type LeaseRef,
  type SweptJob,
} from '@fenceline/core';
import { MemoryStore, type MemJob } from '../src/store/memory-store';

/**
 * Stores that each break exactly one rule the design depends on. The invariant tests run
 * them to show the checker notices: a check that never fires proves nothing.
 */

/** I1: grants a lease even while another worker holds a live one. */
export class DoubleLeasingStore extends MemoryStore {
  protected override grantable(job: MemJob, nowMs: number): boolean {
    return super.grantable(job, nowMs) || job.state === 'leased';
  }
}

/** I2: revokes an expired lease (or takes a hand-back) without raising the fence. */
export class ForgetfulFenceStore extends MemoryStore {
  protected override revokedFence(fence: number): number {
    return fence;
  }
}

/** I3: accepts a worker's write whatever fence it carries, as long as the holder matches. */
export class FenceBlindStore extends MemoryStore {
  protected override fenceAccepts(job: MemJob, ref: LeaseRef, nowMs: number): boolean {
    return job.holder === ref.workerId || super.fenceAccepts(job, ref, nowMs);
  }
}

/** I4: has no unique index on (dag_id, scheduled_at). */
export class NoUniqueRunStore extends MemoryStore {
  protected override slotTaken(): boolean {
    return false;
  }
}

/** I5: its due-DAG query never finds the DAGs of shard 0. */
export class BlindTickStore extends MemoryStore {
  override async dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options?: DueReadOptions): Promise<{ now: Date; dags: DueDag[] }> {
    const result = await super.dueDags(tokens, limit, after, options);
    return { now: result.now, dags: result.dags.filter((d) => d.shard !== 0) };
  }
}

/** I6: a grant leases every ready job of the DAG to the named workers, cap or no cap. */
export class GreedyGrantStore extends MemoryStore {
  override async grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
    const out = await super.grantLeasesMany(items, ttlMs);
    for (const [i, granted] of out.entries()) {
      if (granted instanceof DeposedLeaderError || granted.length === 0) continue;
      const dagId = granted[0]!.dagId;
      const extra: Grant[] = [];
      for (const job of this.allJobs()) if (job.dagId === dagId && job.state === 'ready') extra.push({ jobId: job.id, workerId: granted[0]!.workerId });
      await super.grantLeasesMany([{ token: items[i]!.token, grants: extra }], ttlMs);
    }
    return out;
  }
}

/** I7: never revokes an expired lease, so a crashed worker's job is lost for good. */
export class NoSweepStore extends MemoryStore {
  override async sweepExpired(): Promise<SweptJob[]> {
    return [];
  }
}

/** I8: lets any node write as a shard's leader, deposed or not. */
export class NoEpochStore extends MemoryStore {
  protected override leads(): boolean {
    return true;
  }
}
