import { DEFAULTS } from '../limits';

/** Everything a scheduler node can be tuned with; every field has a production default. */
export interface NodeConfig {
  shardCount: number;
  shardLeaseTtlMs: number;
  shardRenewIntervalMs: number;
  tickIntervalMs: number;
  /** How often a leader revokes expired job leases in its shards. */
  sweepIntervalMs: number;
  leaseTtlMs: number;
  renewIntervalMs: number;
  capFraction: number;
  /** The longest a worker's poll is held open before it is answered empty. */
  pollWaitMs: number;
  /** A worker silent for longer than this leaves the pool. */
  workerLiveWindowMs: number;
  /** How often live workers' last_seen is written, in one statement for all of them. */
  workerHeartbeatIntervalMs: number;
  /** How often a leader re-checks the store for work it may not have been told of. */
  reconcileIntervalMs: number;
  /** Due DAGs read per tick. */
  dueBatch: number;
  /**
   * How far ahead a tick reads DAGs about to come due, to create their runs on their slot
   * rather than at the next tick; 0 reads only what is already due. At least one tick
   * interval, so every slot is read before it comes.
   */
  tickLookaheadMs: number;
  /** Window in which renewals from many workers are gathered into one statement. */
  renewBatchWindowMs: number;
  /**
   * Dispatch rounds allowed at once. A round spends most of its time waiting for its grant
   * statement; a second round plans the slots freed meanwhile instead of waiting for it.
   */
  dispatchRoundsInFlight: number;
  /** How long leases granted after a worker's poll was answered wait for its next poll. */
  outboxHoldMs: number;
  /** How often the node writes the events it gathered, in one statement. */
  eventFlushIntervalMs: number;
  /**
   * Whether the nodes that workers poll share the shards out evenly (planShardShare);
   * otherwise a node takes every shard it finds unheld and the first node up leads them all.
   */
  shareShards: boolean;
}

export const DEFAULT_NODE_CONFIG: NodeConfig = {
  shardCount: DEFAULTS.shardCount,
  shardLeaseTtlMs: DEFAULTS.shardLeaseTtlMs,
  shardRenewIntervalMs: DEFAULTS.shardRenewIntervalMs,
  tickIntervalMs: DEFAULTS.tickIntervalMs,
  sweepIntervalMs: 5_000,
  leaseTtlMs: DEFAULTS.leaseTtlMs,
  renewIntervalMs: DEFAULTS.renewIntervalMs,
  capFraction: DEFAULTS.capFraction,
  pollWaitMs: 25_000,
  workerLiveWindowMs: 60_000,
  workerHeartbeatIntervalMs: 15_000,
  reconcileIntervalMs: 10_000,
  dueBatch: 1000,
  tickLookaheadMs: 2 * DEFAULTS.tickIntervalMs,
  renewBatchWindowMs: 20,
  dispatchRoundsInFlight: 2,
  outboxHoldMs: 5_000,
  eventFlushIntervalMs: 500,
  // Off: on one machine the nodes would only split its CPU and double the statements per
  // job (bench/README.md, "Change: the nodes may share the shards").
  shareShards: false,
};
