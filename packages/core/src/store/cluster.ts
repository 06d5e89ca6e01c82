import type { ShardLeaseRow, WorkerRow } from '../model';
import type { StoreTime, LeaderToken } from './shared';

/**
 * The cluster: the shard count, the shard leases (leadership with an epoch), the nodes
 * seen serving, and the workers seen. A scheduler node contends for shards through it; the
 * CLI and the tools read it.
 */
export interface ClusterStore extends StoreTime {
  /** Fixes the shard count on first call; later calls return the recorded count (a different one is ignored). */
  initCluster(shardCount: number): Promise<{ shardCount: number }>;
  /**
   * Takes the shard if it is unheld, released or expired (epoch + 1), or renews it if
   * `nodeId` already holds it (same epoch). Returns null if another node holds a live lease.
   */
  acquireShard(ask: ShardAsk): Promise<AcquireResult | null>;
  /** Extends the lease; throws DeposedLeaderError if the token is no longer current. */
  renewShard(token: LeaderToken, ttlMs: number): Promise<Date>;
  /** Gives the shard up at once so a standby can take it on its next attempt. */
  releaseShard(token: LeaderToken): Promise<void>;
  listShards(): Promise<ShardLeaseRow[]>;
  /**
   * Returns every shard's lease with the ids of the nodes seen serving within
   * `liveWindowMs`, in byte order, in one call; a `serving` node (one that workers poll) is
   * first stamped as seen at store time now and is always listed, one that is not leaves
   * its stamp to age out. Each node contends for shards and shares them out from this once
   * a tick. Throws InvalidInputError for an empty node id or a window outside 1 ms to a day.
   */
  contentionView(ask: ContentionAsk): Promise<ContentionView>;
  /** Forgets the node's presence at once (a graceful stop), so the others share out its shards without waiting for it to age out. */
  leaveCluster(nodeId: string): Promise<void>;
  /** Workers seen within `withinMs` of store time. */
  listWorkers(withinMs: number): Promise<WorkerRow[]>;
}

export interface AcquireResult {
  token: LeaderToken;
  expiresAt: Date;
  /** Who led before, when this call took the shard over from another node (null otherwise). */
  previousHolder: string | null;
  /**
   * Why the shard changed hands: the old lease expired, was released, or there was none;
   * or it was this node id's own live lease, held by an earlier process of the same id
   * (restarted) or dropped by this one, and is taken again under a new epoch.
   */
  reason: 'expired' | 'released' | 'new' | 'reclaimed';
}

/** A node asking for a shard's lease, for `ttlMs` of store time (ClusterStore.acquireShard). */
export interface ShardAsk {
  shard: number;
  nodeId: string;
  ttlMs: number;
}

/** A node asking what it contends from (ClusterStore.contentionView); `serving` says workers poll it. */
export interface ContentionAsk {
  nodeId: string;
  liveWindowMs: number;
  serving: boolean;
}

/** What a scheduler node contends from: the shard leases and the nodes alive, read at store time `now`. */
export interface ContentionView {
  now: Date;
  shards: ShardLeaseRow[];
  nodes: string[];
}
