import type { BackfillId, DagId, JobId, RunId, WorkerId } from './ids';
import type { RunParams } from './dag/params';
import type { EffectRecord } from './input/effect-reports';
import type { DagSpec } from './spec';

/**
 * The rows every store (SQL or in-memory) hands back. Times are store time; ids of
 * runs and jobs are decimal strings because PostgreSQL bigints do not fit a JS number
 * safely forever, while fences and epochs stay numbers (they grow by one per lease).
 */
export type JobState = 'waiting' | 'ready' | 'leased' | 'succeeded' | 'failed' | 'upstream_failed' | 'skipped' | 'cancelled';
export type RunState = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
/** The state a run ended in. */
export type RunEnd = Extract<RunState, 'succeeded' | 'failed' | 'cancelled'>;
/**
 * What made a run: its DAG's schedule, a manual trigger, a backfill (BackfillRow), or a
 * rerun of a slot whose earlier run was cleared.
 */
export type RunTrigger = 'schedule' | 'manual' | 'backfill' | 'rerun';
export const RUN_TRIGGERS: readonly RunTrigger[] = ['schedule', 'manual', 'backfill', 'rerun'];

/**
 * A job's state in the words a user reads (the console, the HTTP API, the CLI): a job
 * leased to a worker is `running`. `leased` is the store's word, for the lease that makes
 * it so; it stays inside the scheduler, its store and its events.
 */
export type JobStateWord = Exclude<JobState, 'leased'> | 'running';
export const JOB_STATE_WORDS: readonly JobStateWord[] = ['waiting', 'ready', 'running', 'succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled'];

/** The word a user reads for a job state. */
export function jobStateWord(state: JobState): JobStateWord {
  return state === 'leased' ? 'running' : state;
}

export const TERMINAL_JOB_STATES: readonly JobState[] = ['succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled'];
export const TERMINAL_RUN_STATES: readonly RunState[] = ['succeeded', 'failed', 'cancelled'];

export interface DagRow {
  id: DagId;
  shard: number;
  version: number;
  spec: DagSpec;
  paused: boolean;
  /** The next slot the tick will look at; null for manual DAGs. */
  nextRunAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface DagVersionRow {
  dagId: DagId;
  version: number;
  spec: DagSpec;
  createdAt: Date;
}

export interface RunRow {
  id: RunId;
  dagId: DagId;
  dagVersion: number;
  shard: number;
  scheduledAt: Date;
  trigger: RunTrigger;
  state: RunState;
  createdAt: Date;
  startedAt: Date | null;
  endedAt: Date | null;
  /** The run's resolved parameters (a manual trigger's values and the defaults; the defaults for a scheduled run). */
  params: RunParams;
}

export interface JobRow {
  id: JobId;
  runId: RunId;
  dagId: DagId;
  shard: number;
  taskId: string;
  state: JobState;
  /** Leases granted so far (a handed-back lease does not count). */
  attempt: number;
  maxAttempts: number;
  /** Rises by one on every lease and every revocation. */
  fence: number;
  /** The worker that holds (or last held) the lease. */
  holder: WorkerId | null;
  leaseExpiresAt: Date | null;
  /** A retry may not be leased before this store time. */
  nextAttemptAt: Date | null;
  priority: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  timeoutMs: number;
  readyAt: Date | null;
  leasedAt: Date | null;
  endedAt: Date | null;
  lastError: string | null;
}

/** What the result store holds per job: the highest fence it accepted and what came with it. */
export interface ResultRow {
  jobId: JobId;
  fence: number;
  workerId: WorkerId;
  outcome: 'succeeded' | 'failed';
  output: unknown;
  error: string | null;
  logs: string | null;
  /** The effect outcomes the accepted attempt reported; null when it reported none. */
  effects: EffectRecord[] | null;
  writtenAt: Date;
}

export interface ShardLeaseRow {
  shard: number;
  holder: string | null;
  epoch: number;
  expiresAt: Date | null;
  acquiredAt: Date | null;
}

export interface WorkerRow {
  id: WorkerId;
  slots: number;
  nodeId: string | null;
  meta: Record<string, unknown>;
  startedAt: Date;
  lastSeen: Date;
}

export interface EventRow {
  id: string;
  at: Date;
  type: string;
  shard: number | null;
  dagId: DagId | null;
  runId: RunId | null;
  jobId: JobId | null;
  workerId: WorkerId | null;
  nodeId: string | null;
  fence: number | null;
  epoch: number | null;
  data: Record<string, unknown>;
}

/** How a backfill treats a slot that already has a run: leave it (skip) or run it again (rerun). */
export type BackfillMode = 'skip' | 'rerun';
/** running until every slot has its run and every run ended (done), or until cancelled. */
export type BackfillState = 'running' | 'done' | 'cancelled';
export const BACKFILL_MODES: readonly BackfillMode[] = ['skip', 'rerun'];

/**
 * A backfill of a DAG over [fromAt, toAt): one run per slot of the DAG's schedule (as of
 * `dagVersion`), created by the shard's leader at most `maxActiveRuns` unfinished at a
 * time. `nextSlotAt` is where the leader resumes, so a new leader after a failover goes on
 * from the slot the last one recorded; it is null once every slot was created or skipped.
 */
export interface BackfillRow {
  id: BackfillId;
  dagId: DagId;
  dagVersion: number;
  shard: number;
  fromAt: Date;
  toAt: Date;
  maxActiveRuns: number;
  mode: BackfillMode;
  state: BackfillState;
  /** Slots of the range, counted when the backfill was created. */
  totalSlots: number;
  nextSlotAt: Date | null;
  /** Runs the backfill created. */
  createdRuns: number;
  /** Slots that already had a run (of the schedule, a trigger or another backfill) left as it was. */
  skippedSlots: number;
  /** Slots whose ended run the backfill (in rerun mode) took over and cleared to run again. */
  rerunRuns: number;
  /** Runs of the backfill queued or running, counted when the row was read. */
  activeRuns: number;
  /** Runs of the backfill that ended (succeeded, failed or cancelled), counted when the row was read. */
  finishedRuns: number;
  /** Who asked: the console user or the CLI's OS user. */
  requestedBy: string;
  createdAt: Date;
  /** When it finished, or when its leader cancelled its queued runs; null while it is open. */
  endedAt: Date | null;
  /** Set only on createBackfill's answer to a request whose key started this backfill before: nothing was written. */
  repeated?: true;
}
