import type { DeposedLeaderError, ErrorCode, FencelineError } from './errors';
import type { DagRow, DagVersionRow, EventRow, JobRow, ResultRow, RunRow, ShardLeaseRow, WorkerRow } from './model';
import type { DagSpec, DagSpecInput } from './spec';

/**
 * The store contract. The SQL store (packages/db) and the simulator's in-memory store
 * (packages/sim) both implement it and both pass packages/core/src/testing/store-contract.ts.
 *
 * Rules every implementation keeps ("The store's rules" in docs/architecture.md):
 * - time is the store's own clock (`now()` in PostgreSQL), never the caller's;
 * - each operation is one statement or one short transaction;
 * - a leader operation takes a LeaderToken and writes nothing unless that token's epoch
 *   is still the shard's current epoch, held by that node and not expired; otherwise it
 *   throws DeposedLeaderError;
 * - a worker operation takes a LeaseRef and writes nothing unless the fence equals the
 *   job's fence, the holder matches and the lease is live; otherwise it throws (or, for
 *   batches, reports) StaleFence / ForgedFence / LeaseLost / NotFound.
 */

/** Proof of shard leadership, carried by every leader write. */
export interface LeaderToken {
  shard: number;
  nodeId: string;
  epoch: number;
}

/** Proof of a job lease, carried by every worker write. */
export interface LeaseRef {
  jobId: string;
  fence: number;
  workerId: string;
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
  jobId: string;
  workerId: string;
}

export interface GrantedLease {
  jobId: string;
  runId: string;
  dagId: string;
  taskId: string;
  workerId: string;
  fence: number;
  attempt: number;
  leaseExpiresAt: Date;
}

export interface SweptJob {
  jobId: string;
  runId: string;
  dagId: string;
  previousHolder: string | null;
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
  | { jobId: string; ok: true; leaseExpiresAt: Date }
  | { jobId: string; ok: false; code: Extract<ErrorCode, 'STALE_FENCE' | 'FORGED_FENCE' | 'LEASE_LOST' | 'NOT_FOUND'>; message: string };

/** One worker write of a batch: the row it left, or the typed refusal (nothing written). */
export type WriteOutcome = { jobId: string; ok: true; row: JobRow } | { jobId: string; ok: false; error: FencelineError };

/** One successful result of a batch of completions. */
export interface CompleteItem {
  ref: LeaseRef;
  output?: unknown;
  logs?: string | null;
}

/** The tick's write for one due DAG (see createScheduledRuns). */
export interface ScheduledRunsItem {
  dagId: string;
  expectedNextRunAt: Date;
  slots: Date[];
  nextRunAt: Date | null;
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
  id: string;
  shard: number;
  version: number;
  spec: DagSpec;
  nextRunAt: Date;
}

/** How a leader reads ahead of the DAGs already due (Store.dueDags). */
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
  dagId?: string;
  state?: RunRow['state'];
  limit?: number;
  beforeId?: string;
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
  dagId?: string | null;
  runId?: string | null;
  jobId?: string | null;
  workerId?: string | null;
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
      runId: string;
      /** The queued run's facts, so the leader need not read the run back (older senders omit them). */
      dagId?: string;
      dagVersion?: number;
      scheduledAt?: string;
    }
  | {
      kind: 'job-ended';
      shard: number;
      jobId: string;
      /** Every job of the shard that ended, jobId included, when one notice tells of several (older senders send jobId alone). */
      jobIds?: string[];
    }
  | { kind: 'dag-changed'; shard: number; dagId: string };

/** How a manual trigger identifies itself; see Store.triggerRun. */
export interface TriggerOptions {
  requestKey?: string;
}

/** What a scheduler node contends from: the shard leases and the nodes alive, read at store time `now`. */
export interface ContentionView {
  now: Date;
  shards: ShardLeaseRow[];
  nodes: string[];
}

export interface Store {
  /** The store's clock. */
  now(): Promise<Date>;

  // ---- cluster -------------------------------------------------------------
  /** Fixes the shard count on first call; later calls return the recorded count (a different one is ignored). */
  initCluster(shardCount: number): Promise<{ shardCount: number }>;

  // ---- shard leadership (a lease with an epoch) ------------------------------
  /**
   * Takes the shard if it is unheld, released or expired (epoch + 1), or renews it if
   * `nodeId` already holds it (same epoch). Returns null if another node holds a live lease.
   */
  acquireShard(shard: number, nodeId: string, ttlMs: number): Promise<AcquireResult | null>;
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
  contentionView(nodeId: string, liveWindowMs: number, serving: boolean): Promise<ContentionView>;
  /** Forgets the node's presence at once (a graceful stop), so the others share out its shards without waiting for it to age out. */
  leaveCluster(nodeId: string): Promise<void>;

  // ---- DAGs (operator writes; validated) ------------------------------------
  /**
   * Validates and stores a spec. A spec equal to the current version changes nothing;
   * otherwise a new immutable version is created and becomes current. Throws InvalidDagError.
   */
  putDag(spec: DagSpecInput, shardCount: number): Promise<{ dagId: string; version: number; created: boolean }>;
  getDag(dagId: string): Promise<DagRow>;
  getDagVersion(dagId: string, version: number): Promise<DagVersionRow>;
  /** Many versions in one read; the ones that do not exist are left out. */
  getDagVersions(keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]>;
  listDagVersions(dagId: string): Promise<DagVersionRow[]>;
  listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }>;
  setPaused(dagId: string, paused: boolean): Promise<DagRow>;
  /**
   * Queues a manual run at store time now; notifies the shard's leader. With a
   * `requestKey`, a second trigger of the DAG with the same key queues nothing and returns
   * the run the first one queued, so a request sent twice (a double click, a retry after a
   * lost answer) makes one run. Throws InvalidInputError for a key that fails
   * checkRequestKey, NotFoundError for a DAG that does not exist.
   */
  triggerRun(dagId: string, options?: TriggerOptions): Promise<RunRow>;

  // ---- reads ------------------------------------------------------------------
  getRun(runId: string): Promise<RunRow>;
  listRuns(query: ListRunsQuery): Promise<RunRow[]>;
  listJobs(runId: string): Promise<JobRow[]>;
  getJob(jobId: string): Promise<JobRow>;
  /**
   * The jobs of these ids that exist, in id order, in one read (at most
   * LIMITS.maxJobsPerRead ids): a leader re-reads every long-leased job it suspects on
   * each reconciliation, and one read per job made that a query per running job.
   */
  getJobs(jobIds: string[]): Promise<JobRow[]>;
  getResult(jobId: string): Promise<ResultRow | null>;

  // ---- leader operations (epoch-checked) -----------------------------------------
  /**
   * DAGs of the given shards whose next_run_at is due (store time), not paused; by index,
   * in (next_run_at, id) order. With `after`, the page starts past that key, so a tick can
   * read its next page while the runs of this one are still being created. See
   * DueReadOptions for reading ahead.
   */
  dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options?: DueReadOptions): Promise<{ now: Date; dags: DueDag[] }>;
  /**
   * Inserts a queued run per slot (ON CONFLICT (dag_id, scheduled_at) DO NOTHING) and moves
   * next_run_at from `expectedNextRunAt` to `nextRunAt`, in one transaction. Returns only
   * the runs it created. If next_run_at is no longer `expectedNextRunAt`, or is still after
   * the store's now (a run is never created before its DAG is due), nothing is written.
   */
  createScheduledRuns(token: LeaderToken, dagId: string, expectedNextRunAt: Date, slots: Date[], nextRunAt: Date | null): Promise<RunRow[]>;
  /**
   * createScheduledRuns for many DAGs of one shard in one transaction; each item is
   * decided on its own (a moved next_run_at writes nothing for that DAG). Returns the
   * runs created per item, in order; a DAG named twice is written for its first item only.
   */
  createScheduledRunsMany(token: LeaderToken, items: ScheduledRunsItem[]): Promise<CreatedRun[][]>;
  /** Everything a new leader needs to take over a shard's in-memory state. */
  loadShard(token: LeaderToken): Promise<ShardSnapshot>;
  /** Queued runs of the shard (for runs queued by triggers the leader was not told of). */
  queuedRuns(token: LeaderToken): Promise<RunRow[]>;
  /** queued -> running, inserting its jobs. Returns the jobs; [] if the run was not queued. */
  startRun(token: LeaderToken, runId: string, jobs: NewJob[]): Promise<JobRow[]>;
  /** startRun for many runs of one shard in one statement; the jobs per item, in order ([] where the run was not queued). */
  startRuns(token: LeaderToken, items: { runId: string; jobs: NewJob[] }[]): Promise<JobRow[][]>;
  /** waiting -> ready for the given jobs; returns the ids it moved. */
  promoteJobs(token: LeaderToken, jobIds: string[]): Promise<string[]>;
  /** waiting|ready -> upstream_failed (a dependency failed); returns the ids it moved. */
  markUpstreamFailed(token: LeaderToken, jobIds: string[]): Promise<string[]>;
  /**
   * running -> succeeded|failed, or queued -> failed (a run that can never start, such as
   * one whose DAG version has more tasks than a run may hold); false if the run did not move.
   */
  finishRun(token: LeaderToken, runId: string, state: 'succeeded' | 'failed'): Promise<boolean>;
  /** finishRun for many runs in one statement; per item whether it moved (a run named twice moves once). */
  finishRuns(token: LeaderToken, items: { runId: string; state: 'succeeded' | 'failed' }[]): Promise<boolean[]>;
  /**
   * For each grant, moves the job ready -> leased only if it is ready, its backoff has
   * passed and nobody holds a live lease: fence + 1, attempt + 1, holder and expiry written,
   * in one statement. Returns the grants that succeeded, with their new fences.
   */
  grantLeases(token: LeaderToken, grants: Grant[], ttlMs: number): Promise<GrantedLease[]>;
  /**
   * grantLeases for the shards of several leaders of one node in one statement: each item
   * is checked against its own token (its grants land only in its shard), and comes back
   * as its granted leases or as the DeposedLeaderError of its token.
   */
  grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]>;

  // ---- leader operations for the shards of several leaders of one node -------------
  // Each takes groups of items, one group per token, and does the work of the matching
  // single-token batch in one statement (one transaction for run creation): every group is
  // checked against its own token and writes only in its own shard, and comes back as its
  // results or as the DeposedLeaderError of its token. A node leading many shards so pays
  // one commit per step of a tick or of a batch of results, not one per shard.
  /** createScheduledRunsMany for several tokens; a DAG named twice anywhere is written for its first item only. */
  createScheduledRunsAcross(groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]>;
  /** startRuns for several tokens. */
  startRunsAcross(groups: LeaderGroup<{ runId: string; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]>;
  /** promoteJobs for several tokens: per group, the ids it moved. */
  promoteJobsAcross(groups: LeaderGroup<string>[]): Promise<(string[] | DeposedLeaderError)[]>;
  /** markUpstreamFailed for several tokens: per group, the ids it moved. */
  markUpstreamFailedAcross(groups: LeaderGroup<string>[]): Promise<(string[] | DeposedLeaderError)[]>;
  /** finishRuns for several tokens. */
  finishRunsAcross(groups: LeaderGroup<{ runId: string; state: 'succeeded' | 'failed' }>[]): Promise<(boolean[] | DeposedLeaderError)[]>;
  /** Revokes expired leases of the shard: back to ready (fence + 1, with backoff) or failed when out of attempts. */
  sweepExpired(token: LeaderToken, limit: number): Promise<SweptJob[]>;

  // ---- worker operations (fenced) ---------------------------------------------------
  /** Renews many leases in one statement; each succeeds only if fence and holder match and the lease is live. */
  renewLeases(refs: LeaseRef[], ttlMs: number): Promise<RenewOutcome[]>;
  /** leased -> succeeded and a fenced write to the result store, atomically. */
  completeJob(ref: LeaseRef, result: { output?: unknown; logs?: string | null }): Promise<JobRow>;
  /**
   * completeJob for many leases in one statement. Each item is fenced on its own: an
   * accepted item is written with its result, a refused one writes nothing and comes back
   * with its typed refusal (TooLarge included). Outcomes are in the order of `items`; a
   * job named twice is completed by its first item only.
   */
  completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]>;
  /**
   * Records a failed attempt: back to ready after the backoff when attempts remain and the
   * failure is retryable, else failed. The result store records it under the same fence.
   */
  failJob(ref: LeaseRef, failure: { error: string; retryable: boolean; logs?: string | null }): Promise<JobRow>;
  /** Hands a lease back unfinished (worker shutting down or over-committed): ready, fence + 1, attempt - 1. */
  releaseJob(ref: LeaseRef): Promise<JobRow>;

  // ---- workers --------------------------------------------------------------------
  registerWorker(worker: { id: string; slots: number; nodeId: string | null; meta?: Record<string, unknown> }): Promise<WorkerRow>;
  /**
   * One statement for many workers: last_seen = now(). With `skipSeenWithinMs`, a worker
   * whose last_seen is already that recent is left as it is: every node vouches for the
   * workers polling it, and with 10,000 workers on 3 nodes rewriting every row on every
   * heartbeat was about 2,000 row writes a second to say what the store already knew.
   */
  heartbeatWorkers(workerIds: string[], nodeId: string | null, skipSeenWithinMs?: number): Promise<void>;
  /** Workers seen within `withinMs` of store time. */
  listWorkers(withinMs: number): Promise<WorkerRow[]>;
  /** Jobs currently leased, optionally to one worker. */
  listLeasedJobs(workerId?: string): Promise<JobRow[]>;

  // ---- event log --------------------------------------------------------------------
  appendEvents(events: NewEvent[]): Promise<void>;
  listEvents(query: { afterId?: string; runId?: string; jobId?: string; type?: string; limit?: number }): Promise<EventRow[]>;

  // ---- notices -------------------------------------------------------------------------
  /** Publishes a notice to every subscribed process (pg_notify in SQL). */
  notify(notice: StoreNotice): Promise<void>;
  /** Receives notices published by any process; returns an unsubscribe function. */
  subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>>;

  close(): Promise<void>;
}
