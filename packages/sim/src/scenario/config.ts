import type { NodeConfig } from '@fenceline/core/engine';

/** A fault drawn at random: how likely per fault tick, and how long it lasts once it strikes. */
export interface FaultRate {
  /** Probability per fault tick that one such fault starts somewhere. */
  probability: number;
  /** It lasts at least this long, so a pause can outlast a lease. */
  minMs: number;
  maxMs: number;
}

export interface FaultConfig {
  /** How often the dice are rolled. */
  tickMs: number;
  workerPause?: FaultRate;
  workerCrash?: FaultRate;
  schedulerPause?: FaultRate;
  leaderCrash?: FaultRate;
  /** Extra one-way delay on a store or worker link while slow. */
  linkSlow?: FaultRate & { extraMs: number };
  linkCut?: FaultRate;
  /**
   * The answers to renewals lost on one worker's (or renewal agent's) link to one node for
   * a while: the node renews, the worker never hears it and tries the next node, while its
   * job may finish and its result go out on the same link.
   */
  renewReplyLoss?: FaultRate;
  /**
   * The store's primary is lost and a standby takes over: every node's store link is cut
   * at the same instant for the promotion window. A call in flight then either never
   * reached the store or landed with its answer lost, as a commit in flight does when the
   * primary dies; every acknowledged write must survive (I9).
   */
  storeFailover?: FaultRate;
  /**
   * One node's store connection gets stuck for a while: its calls reach the store (a write
   * may land) and are never answered, and nothing in the link fails them; they stay stuck
   * until the node replaces its connections. Only the node's own deadline per store call
   * (StoreWatch) gets it going again.
   */
  storeStuck?: FaultRate;
  /** A clock stepped by up to this much, either way. */
  clockStep?: { probability: number; maxStepMs: number };
  /** Every process's clock runs fast or slow by up to this many parts per million. */
  clockDriftPpm?: number;
}

/** A fault at a fixed time, for scenarios that tell a story (a leader dies mid-tick). */
export type ScriptedFault =
  /**
   * Crashes the leader of `shard` at `atMs`; with `afterRunsCreated`, waits from `atMs`
   * until that leader has created this many runs in the shard, so it dies mid-tick.
   */
  | { atMs: number; action: 'crash-leader'; shard: number; downMs: number; afterRunsCreated?: number }
  | { atMs: number; action: 'pause-workers'; count: number; durationMs: number; busyOnly?: boolean }
  | { atMs: number; action: 'crash-workers'; count: number; downMs: number }
  | { atMs: number; action: 'cut-store-link'; node: number; durationMs: number }
  | { atMs: number; action: 'stick-store-link'; node: number; durationMs: number }
  /** One node's result writes are refused at once for a while (Link.refuseWritesFor); its reconnect ends it. */
  | { atMs: number; action: 'refuse-store-writes'; node: number; durationMs: number }
  | { atMs: number; action: 'store-failover'; durationMs: number };

export type DagShape = 'independent' | 'chain' | 'diamond' | 'fanout';

/** A family of generated DAGs that share a shape, a size and a schedule. */
/**
 * An operator's actions during the fault phase (world/operator.ts): each tick, the
 * probability of cancelling a running run (or one task and its downstream) and of
 * clearing a finished task (or retrying a failed run).
 */
export interface OperatorConfig {
  tickMs: number;
  cancel: number;
  clear: number;
}

export interface DagGroup {
  /** DAG ids are `${name}-${index}`; reports group figures by this name. */
  name: string;
  count: number;
  tasks: number;
  shape: DagShape;
  /** Mean job duration; each attempt varies by the scenario's jitter. */
  durationMs: number;
  /** Runs every `everyMs`, each DAG at its own phase; or only when triggered. */
  everyMs?: number;
  /** 'aligned' puts every DAG of the group on the same slots (anchored at the start). */
  phase?: 'spread' | 'aligned';
  /** Manual DAGs are triggered once at this offset from the start. */
  triggerAtMs?: number;
  /**
   * Scheduled DAGs of the group are backfilled once, at `atMs` from the start, over the
   * `spanMs` before that instant, at most `maxActiveRuns` of the backfill's runs unfinished
   * at a time. The range reaches into slots the schedule has run already, which the
   * backfill skips, and its runs race the schedule's for the slots of that instant.
   */
  backfill?: { atMs: number; spanMs: number; maxActiveRuns: number };
  retries?: number;
  capFraction?: number;
  maxActiveRuns?: number;
  timeoutMs?: number;
}

export interface ScenarioConfig {
  name: string;
  description: string;
  seed: number;
  /** Virtual start (ISO 8601); the same for every run, so schedules line up the same way. */
  startAt: string;
  /** Faults are drawn during the first `faultPhaseMs`; then everything heals. */
  faultPhaseMs: number;
  /** Time after the faults stop by which every run created before they stopped must be finished (I7). */
  livenessMs: number;
  cluster: {
    nodes: number;
    shardCount: number;
    /** The fair-share cap; 1 turns it off. */
    capFraction: number;
    /**
     * Lending: a DAG at its cap may borrow idle slots while more than the reserve stays
     * free (never lent): this fraction of the pool, or `lendReserveMinSlots` if that is
     * more. Null or absent: the cap is strict, so a scenario lends only where it says so.
     * Passed to every scheduler node as its `lendReserveFraction`.
     */
    lendReserveFraction?: number | null;
    /** The reserve's floor in slots (at most an eighth of the pool); absent: the nodes' default. */
    lendReserveMinSlots?: number;
    node?: Partial<NodeConfig>;
  };
  workers: {
    count: number;
    slots: number;
    pollWaitMs: number;
    /**
     * Worker identities per host (default 1: every identity its own machine). Above 1, the
     * identities of a host share one renewal agent (world/renewal-agent.ts) that renews all
     * their due leases in one renewMany per node, as a process hosting many identities
     * does; each identity still polls, runs, writes and fails on its own. Not scaled.
     */
    identitiesPerHost?: number;
  };
  network: {
    storeLatencyMs: number;
    storeJitterMs: number;
    workerLatencyMs: number;
    workerJitterMs: number;
    /** A store call with no reply for this long fails (a statement/connection timeout). */
    storeTimeoutMs: number;
    rpcTimeoutMs: number;
  };
  jobs: {
    /** Each attempt takes durationMs * (1 ± jitter), uniformly. */
    durationJitter: number;
    /** Probability that an attempt fails (retryable). */
    failureRate: number;
  };
  load: DagGroup[];
  faults: FaultConfig;
  /** Operator actions during the fault phase; none when absent. */
  operator?: OperatorConfig;
  script: ScriptedFault[];
  /** I5's bound: how late a due slot's run may be created. */
  failoverBoundMs: number;
  /** How often the plots sample the world. */
  sampleEveryMs: number;
  /**
   * Multiplies DAG counts, fan-out sizes and workers (not durations or rates), for running
   * a scenario smaller than it is written; reports state both the written and the run size.
   */
  scale: number;
  /** Named overrides run one after another on the same seed (fanout: cap on, cap off). */
  variants?: { name: string; overrides: DeepPartial<ScenarioConfig> }[];
  /** Which headline figures the report prints. */
  headline: 'fanout' | 'leader-crash' | 'paused-worker' | 'mission-day' | 'swarm';
  /** Swarm: draw the load and fault rates from the seed. */
  randomize?: boolean;
  /** Trace lines kept for a violation report. */
  traceKeep?: number;
}

export type DeepPartial<T> = { [K in keyof T]?: T[K] extends (infer U)[] ? U[] : T[K] extends object ? DeepPartial<T[K]> : T[K] };

export const DEFAULT_SCENARIO: Omit<ScenarioConfig, 'name' | 'description' | 'load' | 'headline'> = {
  seed: 1,
  startAt: '2025-01-06T00:00:00.000Z',
  faultPhaseMs: 0,
  livenessMs: 30 * 60_000,
  cluster: { nodes: 2, shardCount: 16, capFraction: 0.3 },
  workers: { count: 100, slots: 1, pollWaitMs: 25_000 },
  network: { storeLatencyMs: 1, storeJitterMs: 2, workerLatencyMs: 1, workerJitterMs: 2, storeTimeoutMs: 10_000, rpcTimeoutMs: 10_000 },
  jobs: { durationJitter: 0.2, failureRate: 0 },
  faults: { tickMs: 10_000 },
  script: [],
  failoverBoundMs: 60_000,
  sampleEveryMs: 30_000,
  scale: 1,
};

/** Deep-merges overrides onto a base; arrays are replaced, not merged. */
export function merge<T>(base: T, overrides: DeepPartial<T> | undefined): T {
  if (overrides === undefined) return base;
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return (overrides as T) ?? base;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(overrides as Record<string, unknown>)) {
    if (v === undefined) continue;
    const b = out[k];
    out[k] = typeof v === 'object' && v !== null && !Array.isArray(v) && typeof b === 'object' && b !== null && !Array.isArray(b) ? merge(b, v as DeepPartial<typeof b>) : v;
  }
  return out as T;
}

/** A scenario file (partial) completed with the defaults. */
export function resolveScenario(file: DeepPartial<ScenarioConfig> & Pick<ScenarioConfig, 'name' | 'load' | 'headline'>): ScenarioConfig {
  return merge({ description: '', ...DEFAULT_SCENARIO } as ScenarioConfig, file as DeepPartial<ScenarioConfig>);
}
