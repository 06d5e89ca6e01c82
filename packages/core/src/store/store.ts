import type { ClusterStore } from './cluster';
import type { CatalogueStore } from './catalogue';
import type { RunActionStore } from './run-actions';
import type { RunReadStore } from './run-reads';
import type { LeaderStore } from './leader';
import type { WorkerProtocolStore } from './worker-protocol';
import type { WorkerCredentialStore } from './worker-credentials';
import type { EventStore } from './event-log';
import type { NoticeStore } from './notices';
import type { PeopleStore } from './people';
import type { AuditStore } from './audit';
import type { ResourceLimitStore } from './resource-limits';
import type { NotificationStore } from './notifications';
import type { NotificationLeaderStore } from './notification-leader';

/**
 * The store contract. The SQL store (packages/db) and the simulator's in-memory store
 * (packages/sim) both implement it and both pass packages/core/src/testing/store-contract.ts.
 * It is split by role, by who uses each part, one file a role in this folder (cluster.ts,
 * catalogue.ts, run-reads.ts, leader.ts, worker-protocol.ts, ...); `Store` is all of them.
 *
 * Rules every implementation keeps ("The store's rules" in docs/architecture.md):
 * - time is the store's own clock (`now()` in PostgreSQL), never the caller's;
 * - each operation is one statement or one short transaction;
 * - a leader operation takes a LeaderToken and writes nothing unless that token's epoch
 *   is still the shard's current epoch, held by that node and not expired; otherwise it
 *   throws DeposedLeaderError (a write for several leaders returns it for that token's
 *   items instead);
 * - a worker operation takes a LeaseRef and writes nothing unless the fence equals the
 *   job's fence, the holder matches and the lease is live; otherwise it throws (or, for
 *   batches, reports) StaleFence / ForgedFence / LeaseLost / NotFound.
 */

/**
 * Every role at once, for what owns a store's connection (a process's main, the
 * simulator's world) and the contract suite. Each consumer is typed with the roles it
 * uses: a ShardLeader with LeaderStore, a SchedulerNode with NodeStore, and so on.
 */
export interface Store
  extends
    ClusterStore,
    CatalogueStore,
    RunActionStore,
    RunReadStore,
    LeaderStore,
    WorkerProtocolStore,
    WorkerCredentialStore,
    EventStore,
    NoticeStore,
    PeopleStore,
    AuditStore,
    ResourceLimitStore,
    NotificationStore,
    NotificationLeaderStore {
  close(): Promise<void>;
}
