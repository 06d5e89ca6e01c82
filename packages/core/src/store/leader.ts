import type { DeposedLeaderError } from '../errors';
import type { BackfillId, DagId, JobId, RunId, WorkerId } from '../ids';
import type { BackfillRow, DagVersionRow, JobRow, RunRow } from '../model';
import type { DagSpec } from '../spec';
import type { RunParams } from '../dag/params';
import type { LendCheck } from '../fairshare/lend-check';
import type { StoreTime, LeaderToken, LeaderGroup } from './shared';
import type { RunActionRow, RunActionWrite, RunActionOutcome } from './run-actions';

/**
 * What a shard leader reads and writes (epoch-checked). The writes come in the batched
 * forms a node uses: one group of items per token, so a node leading many shards pays one
 * statement for a step of a tick or a batch of results, not one per shard.
 */
export interface LeaderStore extends StoreTime {
  /**
   * DAGs of the given shards whose next_run_at is due (store time), not paused; by index,
   * in (next_run_at, id) order. With `after`, the page starts past that key, so a tick can
   * read its next page while the runs of this one are still being created. See
   * DueReadOptions for reading ahead.
   */
  dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options?: DueReadOptions): Promise<{ now: Date; dags: DueDag[] }>;
  /** Everything a new leader needs to take over a shard's in-memory state. */
  loadShard(token: LeaderToken): Promise<ShardSnapshot>;
  /** Queued runs of the shard (for runs queued by triggers the leader was not told of). */
  queuedRuns(token: LeaderToken): Promise<RunRow[]>;
  /** Many DAG versions in one read (the specs of runs a leader has not seen yet); the ones that do not exist are left out. */
  getDagVersions(keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]>;
  /**
   * The jobs of these ids that exist, in id order, in one read (at most
   * LIMITS.maxJobsPerRead ids): a leader re-reads every long-leased job it suspects on
   * each reconciliation, and one read per job made that a query per running job.
   */
  getJobs(jobIds: JobId[]): Promise<JobRow[]>;
  /**
   * For each grant of each item, moves the job ready -> leased only if it is ready, its
   * backoff has passed and nobody holds a live lease: fence + 1, attempt + 1, holder and
   * expiry written, in one statement for the shards of several leaders of one node. Each
   * item is checked against its own token (its grants land only in its shard), and comes
   * back as the grants that succeeded, with their new fences, or as the
   * DeposedLeaderError of its token.
   */
  grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]>;
  /** Operator actions on the shard's runs that no leader has applied yet, oldest first. */
  pendingRunActions(token: LeaderToken): Promise<RunActionRow[]>;
  /** A run and its jobs, as a leader plans an action on it; null if the run does not exist. */
  readRun(runId: RunId): Promise<{ run: RunRow; jobs: JobRow[] } | null>;
  /**
   * Writes an action's plan in one transaction, under the token: every change only if its
   * job is still in the state planned (else nothing and `conflict`), the run's state, and
   * the action marked applied with its result. A job moved to cancelled, succeeded or
   * failed from leased has its lease revoked (fence + 1), so its holder's writes are
   * refused; a job moved back to waiting gets a fresh attempt count and fence + 1. An
   * action already applied writes nothing and comes back `done`.
   */
  applyRunAction(token: LeaderToken, write: RunActionWrite): Promise<RunActionOutcome>;
  /** Revokes expired leases of the shard: back to ready (fence + 1, with backoff) or failed when out of attempts. */
  sweepExpired(token: LeaderToken, limit: number): Promise<SweptJob[]>;

  /** The backfills of these shards still open (running, or cancelled with runs not yet settled), oldest first. */
  openBackfills(tokens: LeaderToken[]): Promise<BackfillRow[]>;
  /**
   * One step of a running backfill, under the token's lead check, in one transaction:
   * inserts a queued run (trigger 'backfill') for each slot with ON CONFLICT (dag_id,
   * scheduled_at) DO NOTHING, counts the slots that already had one as skipped, and moves
   * next_slot_at, so a failover resumes where the last step ended. Nothing is written (null)
   * if the backfill is not running, its next slot is not `expectedNextSlotAt`, the slots are
   * not ascending slots of its range from there, or they would take it past its max active
   * runs; a step with nothing left to create and no run left unfinished marks it done.
   * Throws DeposedLeaderError if the token no longer leads the backfill's shard.
   */
  advanceBackfill(token: LeaderToken, step: BackfillStep): Promise<BackfillAdvance | null>;
  /**
   * A cancelled backfill's queued runs -> cancelled and its ended_at stamped, under the
   * token's lead check, in one statement; null if it is not a cancelled open backfill of
   * the shard. Throws DeposedLeaderError if the token no longer leads the shard.
   */
  settleBackfill(token: LeaderToken, backfillId: BackfillId): Promise<BackfillSettled | null>;

  // Each of the following takes groups of items, one group per token, in one statement
  // (one transaction for run creation): every group is checked against its own token and
  // writes only in its own shard, and comes back as its results or as the
  // DeposedLeaderError of its token.
  /**
   * Per due DAG: inserts a queued run per slot (ON CONFLICT (dag_id, scheduled_at) DO
   * NOTHING) and moves next_run_at from `expectedNextRunAt` to `nextRunAt`. Returns only
   * the runs it created, per item, in order. If next_run_at is no longer
   * `expectedNextRunAt`, or is still after the store's now (a run is never created before
   * its DAG is due), nothing is written for that DAG; a DAG named twice anywhere is written
   * for its first item only.
   */
  createScheduledRunsAcross(groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]>;
  /** queued -> running, inserting its jobs: the jobs per item, in order ([] where the run was not queued). */
  startRunsAcross(groups: LeaderGroup<{ runId: RunId; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]>;
  /** waiting -> ready for the given jobs: per group, the ids it moved. */
  promoteJobsAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]>;
  /** waiting|ready -> upstream_failed (a dependency failed): per group, the ids it moved. */
  markUpstreamFailedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]>;
  /** waiting -> skipped (the task's trigger rule can no longer be met, and nothing failed): per group, the ids it moved. */
  markSkippedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]>;
  /**
   * running -> succeeded|failed, or queued -> failed (a run that can never start, such as
   * one whose DAG version has more tasks than a run may hold): per item whether the run
   * moved (a run named twice moves once).
   */
  finishRunsAcross(groups: LeaderGroup<{ runId: RunId; state: 'succeeded' | 'failed' | 'cancelled' }>[]): Promise<(boolean[] | DeposedLeaderError)[]>;
}

export interface NewJob {
  taskId: string;
  /** 'ready' for the roots of the DAG, 'waiting' for the rest. */
  state: 'ready' | 'waiting';
  maxAttempts: number;
  priority: number;
  retryBackoffMs: number;
  retryBackoffMaxMs: number;
  timeoutMs: number;
  /** Units of resource limits the job holds while leased; none when absent. */
  resources?: Record<string, number>;
}

export interface Grant {
  jobId: JobId;
  workerId: WorkerId;
  /**
   * Whether the job consumes resource limits. The store grants such a job only on the path
   * that locks the limits and checks its units fit; a grant without the flag never leases a
   * limited job, so a wrong flag can cost a round, never a limit.
   */
  limited?: boolean;
  /**
   * The lending check of the round that planned the grant, in a node that lends
   * (fairshare/lend-check.ts): the store refuses a lent grant that would leave the pool
   * fewer free slots than the reserve, by its own records of the leases.
   */
  lend?: LendCheck;
  /** Whether the grant takes its DAG above its cap (it borrows a slot); only with `lend`. */
  lent?: boolean;
}

export interface GrantedLease {
  jobId: JobId;
  runId: RunId;
  dagId: DagId;
  taskId: string;
  workerId: WorkerId;
  fence: number;
  attempt: number;
  /** The store's time of the grant: the event that reports it carries this time. */
  leasedAt: Date;
  leaseExpiresAt: Date;
}

export interface SweptJob {
  jobId: JobId;
  runId: RunId;
  dagId: DagId;
  previousHolder: WorkerId | null;
  /** The fence after revocation (one higher than the expired lease's). */
  fence: number;
  state: 'ready' | 'failed';
  nextAttemptAt: Date | null;
  /** Whether the holder renewed the expired lease at least once. */
  renewed: boolean;
  /**
   * False when the holder never renewed the lease (it may never have been delivered, or
   * its worker stopped before its first renewal): the attempt was handed back (up to
   * LIMITS.maxLostLeases times per job).
   */
  attemptCounted: boolean;
}

/** The tick's write for one due DAG (see LeaderStore.createScheduledRunsAcross). */
export interface ScheduledRunsItem {
  dagId: string;
  expectedNextRunAt: Date;
  slots: Date[];
  nextRunAt: Date | null;
  /** The parameters of every run this item creates: the defaults of the DAG version the leader planned with. */
  params?: RunParams;
  /**
   * Start the run in the same write: with exactly one slot, and only if the DAG is still
   * at `version`, the run is created running with these jobs inserted (a leader asks when
   * the DAG has room under its max active runs and nothing queued ahead). Otherwise, or
   * without it, the run is created queued.
   */
  start?: { version: number; jobs: NewJob[] };
}

/** A run a tick created: `jobs` is set when it was created running (ScheduledRunsItem.start). */
export type CreatedRun = RunRow & { jobs?: JobRow[] };

export interface DueDag {
  id: DagId;
  shard: number;
  version: number;
  spec: DagSpec;
  nextRunAt: Date;
}

/** How a leader reads ahead of the DAGs already due (LeaderStore.dueDags). */
export interface DueReadOptions {
  /**
   * DAGs due within this long after now are read too: a leader reads the DAGs about to
   * come due so it can create their runs on their slot rather than up to a tick later.
   * Creating their runs still waits until they are due.
   */
  horizonMs?: number;
  /**
   * DAGs whose next_run_at is one of these instants are left out: the leader holds those
   * slots already (or is creating their runs), and reading 100,000 DAGs of a midnight slot
   * again every tick until their runs exist would cost a read of them all each time. At
   * most LIMITS.maxSkippedSlots instants.
   */
  skipSlots?: Date[];
}

/** Where a page of due DAGs ended: the next page starts after this (next_run_at, id). */
export interface DuePageKey {
  nextRunAt: Date;
  id: string;
}

export interface ShardSnapshot {
  /** Active runs (queued or running) of the shard, oldest first. */
  runs: RunRow[];
  /** Every job of those runs. */
  jobs: JobRow[];
  /** The spec of every DAG version those runs pinned, keyed `${dagId}@${version}`. */
  versions: Map<string, DagSpec>;
  /** Store time when the snapshot was read. */
  now: Date;
}

/**
 * One step of a backfill's leader (LeaderStore.advanceBackfill): create a queued run for
 * each of `slots` that has none yet and move the backfill's next slot from
 * `expectedNextSlotAt` to `nextSlotAt`, in one transaction. A step with no slots and no
 * next slot closes a backfill whose runs all ended.
 */
export interface BackfillStep {
  backfillId: BackfillId;
  expectedNextSlotAt: Date | null;
  slots: Date[];
  nextSlotAt: Date | null;
}

/** What a step wrote: the backfill as it is now and the runs it created, by slot. */
export interface BackfillAdvance {
  backfill: BackfillRow;
  created: RunRow[];
  /** Ended runs of the step's slots a rerun-mode backfill took over: each has a pending clear of all its tasks. */
  rerun: RunId[];
}

/** What settling a cancelled backfill did (LeaderStore.settleBackfill). */
export interface BackfillSettled {
  backfill: BackfillRow;
  /** Its queued runs, now cancelled: they never started. */
  cancelledRunIds: RunId[];
  /** Its runs that were running: they run on until something cancels them one by one. */
  runningRunIds: RunId[];
}
