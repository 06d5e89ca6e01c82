import { InvalidInputError } from '../errors';
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
  /**
   * Lending: a DAG at its cap may borrow idle slots of its pool while more than the
   * reserve stays free (never lent): this fraction of the pool's slots, or
   * `lendReserveMinSlots` if that is more (fairshare/lend-check.ts, reserveOf). Null: no
   * lending, the cap is strict.
   */
  lendReserveFraction: number | null;
  /** The reserve's floor in slots, of which a pool keeps at most an eighth (see reserveOf). */
  lendReserveMinSlots: number;
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
  /**
   * The only shards this node may lead; null (the default) lets it lead any. For pinning a
   * node to some shards, and for tests that need a shard nobody leads while nodes run.
   */
  leadShards: number[] | null;
  /** How often a node checks the deadlines of the shards it leads and, as the cluster's watcher, the shards and pools. */
  notifyCheckIntervalMs: number;
  /**
   * The deadline of every store call the node makes: one still without an answer after this
   * long fails as the store being unavailable (whatever waits on it tries again), and the
   * node replaces its store connections (StoreWatch).
   */
  storeCallTimeoutMs: number;
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
  // On: a DAG at its cap borrows what the pool has idle. 0.3% holds the other DAGs of a
  // 10,000-slot pool, and the floor of 10 slots those of a smaller one (the simulator's
  // fanout scenario at full size and at a tenth; packages/sim/README.md).
  lendReserveFraction: 0.003,
  lendReserveMinSlots: 10,
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
  // job (docs/history.md, "Change: the nodes may share the shards").
  shareShards: false,
  leadShards: null,
  notifyCheckIntervalMs: 10_000,
  // Every store call is one statement or one short transaction; a healthy store answers
  // in milliseconds, and one that takes this long is not going to answer.
  storeCallTimeoutMs: 20_000,
};

/** The settings that count milliseconds or items and are meaningless at zero. */
const POSITIVE_INTEGERS = [
  'shardCount',
  'shardLeaseTtlMs',
  'shardRenewIntervalMs',
  'tickIntervalMs',
  'sweepIntervalMs',
  'leaseTtlMs',
  'renewIntervalMs',
  'pollWaitMs',
  'workerLiveWindowMs',
  'workerHeartbeatIntervalMs',
  'reconcileIntervalMs',
  'dueBatch',
  'dispatchRoundsInFlight',
  'eventFlushIntervalMs',
  'notifyCheckIntervalMs',
  'storeCallTimeoutMs',
] as const satisfies readonly (keyof NodeConfig)[];

/** The settings that may be zero (zero turns the feature off) but never negative or fractional. */
const NON_NEGATIVE_INTEGERS = ['tickLookaheadMs', 'renewBatchWindowMs', 'outboxHoldMs', 'lendReserveMinSlots'] as const satisfies readonly (keyof NodeConfig)[];

/**
 * Refuses a configuration a node cannot run with, naming every wrong field at once. A zero
 * interval would make a busy loop, and a renewal interval that is not shorter than its TTL
 * would let every lease expire between two renewals, so both are refused at start.
 */
export function checkNodeConfig(config: NodeConfig): NodeConfig {
  const problems: string[] = [];
  for (const field of POSITIVE_INTEGERS) {
    const value = config[field];
    if (!Number.isInteger(value) || value < 1) problems.push(`${field} must be a whole number of at least 1, got ${value}`);
  }
  for (const field of NON_NEGATIVE_INTEGERS) {
    const value = config[field];
    if (!Number.isInteger(value) || value < 0) problems.push(`${field} must be a whole number of at least 0, got ${value}`);
  }
  const only = config.leadShards;
  if (only !== null && (!Array.isArray(only) || only.length === 0 || !only.every((n) => Number.isInteger(n) && n >= 0))) {
    problems.push(`leadShards must be null or a non-empty list of shard numbers (whole numbers of at least 0), got ${JSON.stringify(only)}`);
  }
  if (!(config.capFraction > 0 && config.capFraction <= 1)) problems.push(`capFraction must be in (0, 1], got ${config.capFraction}`);
  const reserve = config.lendReserveFraction;
  if (reserve !== null && !(reserve >= 0 && reserve < 1)) problems.push(`lendReserveFraction must be null or in [0, 1), got ${reserve}`);
  if (!(config.renewIntervalMs < config.leaseTtlMs)) {
    problems.push(`renewIntervalMs (${config.renewIntervalMs}) must be shorter than leaseTtlMs (${config.leaseTtlMs})`);
  }
  if (!(config.shardRenewIntervalMs < config.shardLeaseTtlMs)) {
    problems.push(`shardRenewIntervalMs (${config.shardRenewIntervalMs}) must be shorter than shardLeaseTtlMs (${config.shardLeaseTtlMs})`);
  }
  if (problems.length > 0) throw new InvalidInputError(`invalid scheduler configuration: ${problems.join('; ')}`, { problems });
  return config;
}
