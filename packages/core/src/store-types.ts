import type { ErrorCode, FencelineError } from './errors';
import type { DagId, JobId, RunId, WorkerId } from './ids';
import type { JobRow, RunRow, ShardLeaseRow } from './model';
import type { RunParams } from './dag/params';
import type { DagSpec } from './spec';

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
}

export interface Grant {
  jobId: JobId;
  workerId: WorkerId;
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
  | { kind: 'dag-changed'; shard: number; dagId: DagId };

/** How a manual trigger identifies itself; see CatalogueStore.triggerRun. */
export interface TriggerOptions {
  requestKey?: string;
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
