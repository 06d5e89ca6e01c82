import { isSequenceId } from '@fenceline/core';
import type { DagId, DagRow, DagSpec, JobId, JobRow, JobState, RunId, RunParams, RunRow, RunState, RunTrigger, WorkerId } from '@fenceline/core';

/**
 * Whether a string can name a row by a bigint id, by the core's one rule (a wrong one finds
 * nothing in the SQL store, and nothing here). Callers pass typed ids; this guards a value
 * that reached the store around its parser.
 */
export const isId = (id: string): boolean => isSequenceId(id);
/** The id of the `num`th job or run, printed as the SQL store's bigint sequences print. */
export const jobIdOf = (num: number): JobId => String(num) as JobId;
export const runIdOf = (num: number): RunId => String(num) as RunId;
export const date = (ms: number): Date => new Date(ms);
export const dateOrNull = (ms: number | null): Date | null => (ms === null ? null : new Date(ms));
/** Orders two ids or keys by their UTF-16 code units (the order the store's reads list them in). */
export const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Job rows kept with times as epoch milliseconds; Dates are made only when a row is read. */
export interface MemJob {
  num: number;
  id: JobId;
  runId: RunId;
  dagId: DagId;
  shard: number;
  taskId: string;
  state: JobState;
  attempt: number;
  maxAttempts: number;
  fence: number;
  holder: WorkerId | null;
  /** The session the current lease was granted to (jobs.holder_session). */
  holderSession: string | null;
  leaseExpiresAtMs: number | null;
  nextAttemptAtMs: number | null;
  priority: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  timeoutMs: number;
  readyAtMs: number | null;
  leasedAtMs: number | null;
  /** Whether the holder renewed the current lease at least once. */
  renewed: boolean;
  /** Leases that expired unrenewed; see LIMITS.maxLostLeases. */
  lostLeases: number;
  endedAtMs: number | null;
  lastError: string | null;
  /** Units of resource limits it holds while leased (jobs.resources); null for none. */
  resources: Record<string, number> | null;
}

export interface MemRun {
  num: number;
  id: RunId;
  dagId: DagId;
  dagVersion: number;
  shard: number;
  scheduledAtMs: number;
  trigger: RunTrigger;
  state: RunState;
  /** The backfill that created the run (runs.backfill_id); null for every other run. */
  backfillId: string | null;
  createdAtMs: number;
  startedAtMs: number | null;
  endedAtMs: number | null;
  params: RunParams;
  jobIds: JobId[];
}

export interface MemDag {
  id: DagId;
  shard: number;
  version: number;
  paused: boolean;
  nextRunAtMs: number | null;
  createdAtMs: number;
  updatedAtMs: number;
}

export interface MemShard {
  shard: number;
  holder: string | null;
  epoch: number;
  expiresAtMs: number | null;
  acquiredAtMs: number | null;
}

/** A job as the Store returns it. */
export function jobRowOf(j: MemJob): JobRow {
  return {
    id: j.id,
    runId: j.runId,
    dagId: j.dagId,
    shard: j.shard,
    taskId: j.taskId,
    state: j.state,
    attempt: j.attempt,
    maxAttempts: j.maxAttempts,
    fence: j.fence,
    holder: j.holder,
    leaseExpiresAt: dateOrNull(j.leaseExpiresAtMs),
    nextAttemptAt: dateOrNull(j.nextAttemptAtMs),
    priority: j.priority,
    retryBackoffMs: j.retryBackoffMs,
    retryBackoffMaxMs: j.retryBackoffMaxMs,
    timeoutMs: j.timeoutMs,
    readyAt: dateOrNull(j.readyAtMs),
    leasedAt: dateOrNull(j.leasedAtMs),
    endedAt: dateOrNull(j.endedAtMs),
    lastError: j.lastError,
  };
}

/** A run as the Store returns it. */
export function runRowOf(r: MemRun): RunRow {
  return {
    id: r.id,
    dagId: r.dagId,
    dagVersion: r.dagVersion,
    shard: r.shard,
    scheduledAt: date(r.scheduledAtMs),
    trigger: r.trigger,
    state: r.state,
    createdAt: date(r.createdAtMs),
    startedAt: dateOrNull(r.startedAtMs),
    endedAt: dateOrNull(r.endedAtMs),
    params: { ...r.params },
  };
}

/** A DAG head as the Store returns it, with the spec of its current version. */
export function dagRowOf(dag: MemDag, spec: DagSpec): DagRow {
  return {
    id: dag.id,
    shard: dag.shard,
    version: dag.version,
    spec,
    paused: dag.paused,
    nextRunAt: dateOrNull(dag.nextRunAtMs),
    createdAt: date(dag.createdAtMs),
    updatedAt: date(dag.updatedAtMs),
  };
}
