import type { ClusterStore } from './cluster';
import type { RunReadStore } from './run-reads';
import type { LeaderStore } from './leader';
import type { WorkerProtocolStore } from './worker-protocol';
import type { EventStore } from './event-log';
import type { NoticeStore } from './notices';
import type { ResourceLimitStore } from './resource-limits';
import type { NotificationLeaderStore } from './notification-leader';

/**
 * What a scheduler node uses: it contends for shards, leads them, serves the worker protocol
 * and logs events. It reads a queued run with `getRun` when a notice named the run without
 * its facts (older senders).
 */
export interface NodeStore
  extends ClusterStore, LeaderStore, WorkerProtocolStore, EventStore, NoticeStore, NotificationLeaderStore, Pick<ResourceLimitStore, 'resourceUse'>, Pick<RunReadStore, 'getRun'> {
  /**
   * Replaces the store's connections with new ones: calls still waiting on the old ones fail
   * as unavailable, and notice subscriptions carry over. A node calls it when a call got no
   * answer within its deadline (StoreWatch). Optional: a store without connections has none
   * to replace.
   */
  reconnect?(): Promise<void>;
}
