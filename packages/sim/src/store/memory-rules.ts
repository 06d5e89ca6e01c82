import type { LeaseRef, LeaderToken } from '@fenceline/core/store';
import type { MemJob } from './memory-rows';
import type { MemoryRules, MemoryTables } from './memory-tables';

/**
 * The rules that keep "once" true, as the SQL store keeps them. Every part calls them
 * through the tables, so a test store can replace exactly one (MemoryStoreOptions.rules)
 * and show that the invariant checker notices. `tables` is read at each call: the tables
 * are made with the rules.
 */
export function standardRules(tables: () => MemoryTables): MemoryRules {
  return {
    leads(token: LeaderToken, nowMs: number): boolean {
      const row = tables().shards.get(token.shard);
      return !!row && row.holder === token.nodeId && row.epoch === token.epoch && row.expiresAtMs !== null && row.expiresAtMs > nowMs;
    },
    // The session a write carries must be the one its lease was granted to and still its
    // holder's current one; null is the node's own hand-back of a lease it never delivered.
    fenceAccepts(job: MemJob, ref: LeaseRef, nowMs: number): boolean {
      const session = ref.session === null || (job.holderSession === ref.session && tables().workerTable.session(ref.workerId) === ref.session);
      return job.fence === ref.fence && job.holder === ref.workerId && job.state === 'leased' && job.leaseExpiresAtMs !== null && job.leaseExpiresAtMs > nowMs && session;
    },
    revokedFence(fence: number): number {
      return fence + 1;
    },
    grantable(job: MemJob, nowMs: number): boolean {
      return job.state === 'ready' && (job.nextAttemptAtMs === null || job.nextAttemptAtMs <= nowMs);
    },
    slotTaken(dagId: string, scheduledAtMs: number): boolean {
      return tables().runKeys.has(`${dagId}\u0000${scheduledAtMs}`);
    },
  };
}
