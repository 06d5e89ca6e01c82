import type { ErrorCode, FencelineError } from './errors';
import type { KeyedRequestOptions } from './request-keys';
import type { BackfillId, DagId, JobId, RunId, WorkerId } from './ids';
import type { BackfillRow, JobRow, JobState, RunRow, ShardLeaseRow } from './model';
import type { RunParams } from './dag/params';
import type { EffectRecord } from './input/effect-reports';
import type { DagSpec } from './spec';
import type { LendCheck } from './fairshare/lend-check';

/**
 * The values the store's operations take and give back (store.ts holds the operations,
 * split by role). Kept apart so each file can be read whole.
 */
/** Proof of shard leadership, carried by every leader write. */
export interface LeaderToken {
  shard: number;
  nodeId: string;
  epoch: number;
}

/** Proof of a job lease, carried by every worker write. */
export interface LeaseRef {
  jobId: JobId;
  fence: number;
  workerId: WorkerId;
  /**
   * The session key the writer presents (the node passes the hash of the worker's session
   * secret). A write lands only if the lease was granted to this session and the session
   * is still the worker's current one. `null` is a write by the node itself (handing back
   * a lease it granted but never delivered) or by a test driving the store directly: no
   * worker request can carry it, since the scheduler's API requires a session string.
   */
  session: string | null;
}

/**
 * A renewal, with the log lines its worker captured for the job since its last renewal
 * (at most LIMITS.maxLogChunkChars). The lines are appended to the attempt's streamed log
 * only if the renewal itself is accepted: a refused renewal writes nothing.
 */
export type RenewRef = LeaseRef & { log?: string };

/** Log lines of a running attempt, as one renewal appended them (RunReadStore.listLogChunks). */
export interface LogChunkRow {
  jobId: JobId;
  fence: number;
  /** 1, 2, ... within the attempt, in the order the renewals landed. */
  seq: number;
  text: string;
  writtenAt: Date;
}

/** Which streamed log lines to read: one attempt's (by its fence), after a chunk already read. */
export interface LogChunksQuery {
  jobId: JobId;
  fence: number;
  afterSeq?: number;
  /** At most this many chunks (1 to 1,000, default 200). */
  limit?: number;
}

/** A worker credential as an operator sees it; its secret is never stored, only its hash. */
export interface WorkerCredentialRow {
  id: string;
  pool: string;
  createdAt: Date;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
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

export type RenewOutcome =
  | { jobId: JobId; ok: true; leaseExpiresAt: Date }
  | {
      jobId: JobId;
      ok: false;
      code: Extract<ErrorCode, 'STALE_FENCE' | 'FORGED_FENCE' | 'LEASE_LOST' | 'NOT_FOUND'>;
      message: string;
      /** Why a LEASE_LOST lease is lost (`details.cause` of the store's error); for the node's log only, never sent to a worker. */
      cause?: string;
    };

/** One worker write of a batch: the row it left, or the typed refusal (nothing written). */
export type WriteOutcome = { jobId: JobId; ok: true; row: JobRow } | { jobId: JobId; ok: false; error: FencelineError };

/** One successful result of a batch of completions. */
export interface CompleteItem {
  ref: LeaseRef;
  output?: unknown;
  logs?: string | null;
  /** The outcomes of the attempt's effects, kept with its attempt (null or absent: none reported). */
  effects?: EffectRecord[] | null;
}

/** A failed attempt as its worker writes it (WorkerProtocolStore.failJob). */
export interface FailureWrite {
  error: string;
  retryable: boolean;
  logs?: string | null;
  /** The outcomes of the attempt's effects, kept with its attempt (null or absent: none reported). */
  effects?: EffectRecord[] | null;
}

/** One failed attempt of a batch of failures (WorkerProtocolStore.failJobs). */
export interface FailItem extends FailureWrite {
  ref: LeaseRef;
}

/**
 * One attempt of a job that wrote a result (RunReadStore.listAttempts): what its worker
 * wrote under that attempt's fence. An attempt whose lease expired or was handed back wrote
 * nothing and has none.
 */
export interface AttemptRow {
  jobId: JobId;
  fence: number;
  /** The job's attempt number when the result was written (1 for the first). */
  attempt: number;
  workerId: WorkerId;
  outcome: 'succeeded' | 'failed';
  output: unknown;
  error: string | null;
  logs: string | null;
  /** The outcomes of the effects this attempt reported (@fenceline/effects), in the order reported; null when it reported none. */
  effects: EffectRecord[] | null;
  /** When this attempt's lease was granted (store time). */
  startedAt: Date | null;
  /** When its result was written (store time). */
  endedAt: Date;
}

/** An upstream task's accepted output, as the job downstream of it is handed it (WorkerProtocolStore.upstreamOutputs). */
export interface UpstreamOutput {
  taskId: string;
  jobId: JobId;
  /** The fence of the accepted result: the highest the result store holds, equal to the job's. */
  fence: number;
  output: unknown;
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

/** A manual trigger's run; `repeated` when a request key made the trigger a repeat that queued nothing. */
export type TriggeredRun = RunRow & { repeated?: true };

/** A stored run action; `repeated` when a request key made the request a repeat that stored nothing. */
export type RequestedRunAction = RunActionRow & { repeated?: true };

/** The items one leader writes in a multi-shard statement, under its own token. */
export interface LeaderGroup<T> {
  token: LeaderToken;
  items: T[];
}

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

export interface ListDagsQuery {
  search?: string;
  limit?: number;
  offset?: number;
  sort?: 'id' | 'nextRunAt' | 'updatedAt';
  direction?: 'asc' | 'desc';
}

export interface ListRunsQuery {
  dagId?: DagId;
  state?: RunRow['state'];
  limit?: number;
  beforeId?: RunId;
}

/** Which runs come first in a page of runs: by (scheduled_at, id), newest or oldest first. */
export type RunOrder = 'newest' | 'oldest';

/** A page of runs (RunReadStore.pageRuns): every filter is optional and they combine with "and". */
export interface RunPageQuery {
  dagId?: DagId;
  state?: RunRow['state'];
  /** A run's trigger; any of RUN_TRIGGER_NAMES, including ones no run has yet. */
  trigger?: string;
  /** Runs scheduled at or after this instant. */
  scheduledFrom?: Date;
  /** Runs scheduled before this instant. */
  scheduledBefore?: Date;
  order?: RunOrder;
  /** 1 to RUN_PAGE_MAX_LIMIT, default RUN_PAGE_DEFAULT_LIMIT. */
  limit?: number;
  /** A `next` or `previous` of an earlier page with the same order; absent for the first page. */
  cursor?: string;
}

export interface RunPage {
  rows: RunRow[];
  /** The cursor of the page after this one, or null when this is the last. */
  next: string | null;
  /** The cursor of the page before this one, or null when this is the first. */
  previous: string | null;
}

export interface NewEvent {
  type: string;
  /**
   * When it happened, by the emitter's estimate of the store's clock. Events are written in
   * batches, so a store that stamped them on arrival would date them up to a flush interval
   * late; it stamps its own time only on an event that comes without one.
   */
  at?: Date;
  shard?: number | null;
  dagId?: DagId | null;
  runId?: RunId | null;
  jobId?: JobId | null;
  workerId?: WorkerId | null;
  nodeId?: string | null;
  fence?: number | null;
  epoch?: number | null;
  data?: Record<string, unknown>;
}

/** Something another process did that a shard leader should react to. */
export type StoreNotice =
  | {
      kind: 'run-queued';
      shard: number;
      runId: RunId;
      /** The queued run's facts, so the leader need not read the run back (older senders omit them). */
      dagId?: DagId;
      dagVersion?: number;
      scheduledAt?: string;
      /** The run's resolved parameters (older senders omit them, and the leader reads the run back). */
      params?: RunParams;
    }
  | {
      kind: 'job-ended';
      shard: number;
      jobId: JobId;
      /** Every job of the shard that ended, jobId included, when one notice tells of several (older senders send jobId alone). */
      jobIds?: JobId[];
    }
  | {
      /** An operator revoked a worker credential: every node forgets it at once. */
      kind: 'credential-revoked';
      credentialId: string;
    }
  | { kind: 'dag-changed'; shard: number; dagId: DagId }
  | {
      /** An operator asked for an action on a run of the shard (CatalogueStore.requestRunAction). */
      kind: 'run-action';
      shard: number;
      actionId: string;
      runId: RunId;
    }
  /** A backfill was created or cancelled: its shard's leader advances or settles it at once. */
  | { kind: 'backfill-changed'; shard: number; backfillId: BackfillId };

/** How a manual trigger identifies itself; see CatalogueStore.triggerRun. */
export interface TriggerOptions extends KeyedRequestOptions {
  /**
   * Values for the DAG's declared parameters, checked against the current version's
   * declaration (resolveRunParams) before anything is written; the run stores them with the
   * defaults of the ones left out.
   */
  params?: Record<string, unknown>;
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

/**
 * What an operator may do to a run (docs/architecture.md, "Operator actions"):
 * - cancel: the named tasks (and, with `downstream`, everything below them), or with no
 *   tasks the whole run, end cancelled; a running job's lease is revoked (fence + 1);
 * - clear: the named finished tasks (and, with `downstream`, the finished tasks below
 *   them) go back to waiting with fresh attempts and higher fences;
 * - retry_failed: clears every failed and upstream_failed task of the run;
 * - mark_success / mark_failed: the named tasks end as if they had run so, with a reason.
 */
export type RunActionKind = 'cancel' | 'clear' | 'retry_failed' | 'mark_success' | 'mark_failed';

/** An operator's request, as the console, the CLI or a script sends it (CatalogueStore.requestRunAction). */
export interface RunActionRequest {
  runId: RunId;
  kind: RunActionKind;
  /** The tasks acted on; empty means the whole run (cancel and retry_failed only). */
  taskIds?: string[];
  downstream?: boolean;
  /** Why, in the operator's words; required for mark_success and mark_failed. */
  reason?: string | null;
  /** Who asked (a user name, `cli`), for the event log. */
  requestedBy: string;
  /** As for triggers: the same request for the run sent again by its owner with the key returns the first one. */
  requestKey?: string;
  requestOwner?: string;
  requestFingerprint?: string;
}

/** A stored request and, once its shard's leader applied it, what it changed. */
export interface RunActionRow {
  id: string;
  runId: RunId;
  dagId: DagId;
  shard: number;
  kind: RunActionKind;
  taskIds: string[];
  downstream: boolean;
  reason: string | null;
  requestedBy: string;
  state: 'pending' | 'applied';
  createdAt: Date;
  appliedAt: Date | null;
  /** What the leader did: the jobs it changed, by task, and the run's state after. */
  result: RunActionResult | null;
}

export interface RunActionResult {
  changed: { taskId: string; from: JobState; to: JobState }[];
  runState: RunRow['state'];
  /** Why nothing changed, when nothing did ("the run had already ended"). */
  note?: string;
}

/** One job a leader's plan moves, from the state it read to the state it writes. */
export interface JobChange {
  jobId: JobId;
  taskId: string;
  from: JobState;
  to: 'waiting' | 'succeeded' | 'failed' | 'upstream_failed' | 'cancelled';
}

/** A leader's write of an action (LeaderStore.applyRunAction). */
export interface RunActionWrite {
  actionId: string;
  runId: RunId;
  changes: JobChange[];
  /** cancelled ends the run; running reopens a finished one; null leaves it to the leader's finish step. */
  runState: 'cancelled' | 'running' | null;
  /** The error text written on jobs an operator ended (cancelled, marked failed). */
  note: string;
  result: RunActionResult;
}

/**
 * What the write did: `conflict` when a job was no longer in the state the plan read (a
 * result landed in between; the leader plans again), `done` when the action had been
 * applied already (by a previous leader), else the run and its jobs after the write and
 * the leases it revoked.
 */
export type RunActionOutcome =
  | { kind: 'conflict' }
  | { kind: 'done'; action: RunActionRow }
  | { kind: 'applied'; action: RunActionRow; run: RunRow; jobs: JobRow[]; revoked: { jobId: JobId; fence: number; holder: WorkerId | null }[] };

/** Which backfills a read lists (CatalogueStore.listBackfills), newest first. */
export interface ListBackfillsQuery {
  dagId?: DagId;
  limit?: number;
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
