import type { DeposedLeaderError } from './errors';
import type { KeyedRequestOptions } from './request-keys';
import type { BackfillId, DagId, JobId, RunId, WorkerId } from './ids';
import type { BackfillRow, DagRow, DagVersionRow, JobRow, ResultRow, RunEnd, RunRow, ShardLeaseRow, WorkerRow } from './model';
import type { BackfillRequest } from './backfill/plan';
import type { DagSpecInput } from './spec';
import type { ResourceLimitRow } from './resources/limits';
import type { AuditStore, PeopleStore } from './people-store';
import type {
  DeliveryOutcome,
  DeadlineCheck,
  DueNotification,
  ListNotificationsQuery,
  NewNotificationChannel,
  NewNotificationRule,
  NotificationChannelRow,
  NotificationEventItem,
  NotificationRow,
  NotificationRuleRow,
  NotificationWatch,
} from './notify/notifications';
import type {
  LeaderToken,
  LeaseRef,
  AcquireResult,
  NewJob,
  Grant,
  GrantedLease,
  SweptJob,
  RenewOutcome,
  WriteOutcome,
  CompleteItem,
  FailItem,
  FailureWrite,
  UpstreamOutput,
  ScheduledRunsItem,
  CreatedRun,
  TriggeredRun,
  RequestedRunAction,
  LeaderGroup,
  DueDag,
  DueReadOptions,
  DuePageKey,
  ShardSnapshot,
  ListDagsQuery,
  ListRunsQuery,
  RunPageQuery,
  RunPage,
  AttemptRow,
  RenewRef,
  LogChunkRow,
  LogChunksQuery,
  NewEvent,
  StoreNotice,
  TriggerOptions,
  ShardAsk,
  ContentionAsk,
  ContentionView,
  WorkerCredentialRow,
  RunActionRequest,
  RunActionRow,
  RunActionWrite,
  RunActionOutcome,
  ListBackfillsQuery,
  BackfillStep,
  BackfillAdvance,
  BackfillSettled,
} from './store-types';

export type * from './store-types';
export * from './people-store';
export * from './audit-entry';

/**
 * The store contract. The SQL store (packages/db) and the simulator's in-memory store
 * (packages/sim) both implement it and both pass packages/core/src/testing/store-contract.ts.
 * It is split by role, by who uses each part (ClusterStore, CatalogueStore, RunReadStore,
 * LeaderStore, WorkerProtocolStore, EventStore, NoticeStore); `Store` is all of them.
 *
 * Rules every implementation keeps ("The store's rules" in docs/architecture.md):
 * - time is the store's own clock (`now()` in PostgreSQL), never the caller's;
 * - each operation is one statement or one short transaction;
 * - a leader operation takes a LeaderToken and writes nothing unless that token's epoch
 *   is still the shard's current epoch, held by that node and not expired; otherwise it
 *   throws DeposedLeaderError (a write for several leaders returns it for that token's
 *   items instead);
 * - a worker operation takes a LeaseRef and writes nothing unless the fence equals the
 *   job's fence, the holder matches and the lease is live; otherwise it throws (or, for
 *   batches, reports) StaleFence / ForgedFence / LeaseLost / NotFound.
 */

/** The store's clock: every role reads it, since every rule is judged by store time. */
export interface StoreTime {
  now(): Promise<Date>;
}

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

/** How a put is asked: with a request key, a repeated put returns the first answer (KeyedRequestOptions). */
export type PutDagOptions = KeyedRequestOptions;

/** What a put stored: the version now current, whether this put created it, and whether a request key made it a repeat. */
export interface PutDagAnswer {
  dagId: string;
  version: number;
  created: boolean;
  repeated?: boolean;
}

/**
 * The catalogue: DAG specs and their versions, pausing, and manual triggers. Operators
 * write it (console, CLI); every write is validated and tells the shard's leader.
 */
export interface CatalogueStore extends StoreTime {
  /**
   * Validates and stores a spec. A spec equal to the current version changes nothing;
   * otherwise a new immutable version is created and becomes current. Throws InvalidDagError.
   * With a `requestKey` (checked as checkRequestKey checks a trigger's), the answer is
   * stored with the key, its owner and the request's fingerprint for the DAG in the same
   * write: the same put of the DAG sent again by the key's owner writes nothing, even when
   * the DAG changed in between, and returns the first answer with `repeated: true`; the
   * owner's key sent with another spec throws KeyReusedError and writes nothing. Another
   * owner's key of the same text is a key of its own (KeyedRequestOptions).
   */
  putDag(spec: DagSpecInput, shardCount: number, options?: PutDagOptions): Promise<PutDagAnswer>;
  getDag(dagId: DagId): Promise<DagRow>;
  listDagVersions(dagId: DagId): Promise<DagVersionRow[]>;
  listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }>;
  setPaused(dagId: DagId, paused: boolean): Promise<DagRow>;
  /**
   * Queues a manual run at store time now; notifies the shard's leader. With a
   * `requestKey`, the same trigger of the DAG sent again by the key's owner queues nothing
   * and returns the run the first one queued, marked `repeated`, so a request sent twice (a
   * double click, a retry after a lost answer) makes one run; the key sent by its owner with
   * other params throws KeyReusedError. Throws InvalidInputError for a key that fails
   * checkRequestKey or for params the DAG's declaration refuses (`details.issues` names each
   * bad field as `params.NAME`), NotFoundError for a DAG that does not exist; a refused
   * trigger writes nothing.
   */
  triggerRun(dagId: DagId, options?: TriggerOptions): Promise<TriggeredRun>;
  /**
   * Records a backfill of the DAG over [from, to) (validated by planBackfill against the
   * DAG's current schedule, which pins the version whose slots it covers) and notifies the
   * shard's leader, which creates its runs. Throws InvalidInputError naming the field, or
   * NotFoundError for a DAG that does not exist; a refusal writes nothing. With a
   * `requestKey`, the same request of the DAG sent again by the key's owner returns the
   * backfill the first one started (`repeated: true`) and writes nothing, so a request sent
   * twice starts one; the key sent by its owner with another request throws KeyReusedError.
   */
  createBackfill(request: BackfillRequest): Promise<BackfillRow>;
  getBackfill(backfillId: BackfillId): Promise<BackfillRow>;
  listBackfills(query: ListBackfillsQuery): Promise<BackfillRow[]>;
  /**
   * running -> cancelled, so no more of its runs are created, and notifies the shard's
   * leader, which cancels its queued runs (LeaderStore.settleBackfill). A backfill that is
   * no longer running is returned as it is.
   */
  cancelBackfill(backfillId: BackfillId): Promise<BackfillRow>;
}

/**
 * Operator actions on runs (cancel, clear, retry, mark): the console, the CLI and the API
 * request them, the shard's leader applies them. A request is stored before anything
 * changes, so a leader that crashes before applying it leaves it to the next one.
 */
export interface RunActionStore extends StoreTime {
  /**
   * Checks the request against its run's DAG version (checkRunActionRequest), stores it
   * as pending and tells the shard's leader. With a `requestKey`, the same request for the
   * run sent again by the key's owner stores nothing and returns the first, marked
   * `repeated`; the key sent by its owner with another request throws KeyReusedError.
   * Throws NotFoundError for a
   * run that does not exist, InvalidInputError naming each bad field.
   */
  requestRunAction(req: RunActionRequest): Promise<RequestedRunAction>;
  getRunAction(actionId: string): Promise<RunActionRow>;
  /** The run's actions, newest first. */
  listRunActions(runId: RunId): Promise<RunActionRow[]>;
}

/** The reads of runs, jobs and results that the console, the CLI and the tools show. */
export interface RunReadStore extends StoreTime {
  getRun(runId: RunId): Promise<RunRow>;
  listRuns(query: ListRunsQuery): Promise<RunRow[]>;
  /**
   * A page of runs by keyset on (scheduled_at, id), filtered; the first page without a
   * cursor, the others by a `next` or `previous` cursor it gave out. A run is never shown
   * twice nor skipped across pages, whatever is inserted meanwhile. Throws InvalidInputError
   * naming the field for a cursor it did not give out (or gave out for the other order), a
   * limit out of range, an invalid instant or an unknown trigger.
   */
  pageRuns(query: RunPageQuery): Promise<RunPage>;
  listJobs(runId: RunId): Promise<JobRow[]>;
  getJob(jobId: JobId): Promise<JobRow>;
  getResult(jobId: JobId): Promise<ResultRow | null>;
  /** The accepted result of every job of the run that has one, in one read; [] for an unknown run. */
  listRunResults(runId: RunId): Promise<ResultRow[]>;
  /**
   * Every attempt of the job that wrote a result, oldest (lowest fence) first: the result
   * store keeps only the highest fence, this keeps each one. [] for a job with none.
   */
  listAttempts(jobId: JobId): Promise<AttemptRow[]>;
  /** The log lines a running attempt streamed with its renewals, in order; [] for none. */
  listLogChunks(query: LogChunksQuery): Promise<LogChunkRow[]>;
  /** Jobs currently leased, optionally to one worker. */
  listLeasedJobs(workerId?: WorkerId): Promise<JobRow[]>;
}

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

/** One worker in a node's heartbeat: how long the node has not heard from it (0 while its poll is open there). */
export interface WorkerBeat {
  workerId: WorkerId;
  silentMs: number;
}

/**
 * What the worker protocol writes, through the node that serves it: a worker's
 * registration and presence, and its fenced writes on the leases it holds.
 */
export interface WorkerProtocolStore extends StoreTime {
  /**
   * Registers a worker under a session: `session` (the hash of the session secret)
   * becomes the worker's current one, so leases are granted to it and writes carrying an
   * earlier session of the same worker are refused from now on.
   */
  registerWorker(worker: { id: WorkerId; slots: number; nodeId: string | null; meta?: Record<string, unknown>; session: string; credentialId: string | null }): Promise<WorkerRow>;
  /** The worker's current session key, or null when it never registered. */
  workerSession(workerId: WorkerId): Promise<string | null>;
  /**
   * One statement for many workers: each one's last_seen becomes the time the node last
   * heard from it (the store's now() less its `silentMs`), and never goes back. A node
   * therefore vouches for nothing it has not heard: a worker killed at T reads last_seen T
   * on every node's heartbeat after, which is what the console's live window and the
   * `pool_no_worker` watch count from. With `skipSeenWithinMs`, a worker still polling
   * (silentMs 0) whose last_seen is already that recent is left as it is: every node
   * vouches for the workers polling it, and with 10,000 workers on 3 nodes rewriting every
   * row on every heartbeat was about 2,000 row writes a second to say what the store
   * already knew. A silent worker's row is written whenever it moves forward, so the time
   * a worker fell silent is recorded exactly, once.
   */
  heartbeatWorkers(beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs?: number): Promise<void>;
  /**
   * Renews many leases in one statement; each succeeds only if fence and holder match and
   * the lease is live. A renewal that carries log lines appends them to its attempt's
   * streamed log in the same statement, only when it is accepted, and only while the
   * attempt has streamed less than LIMITS.maxStreamedLogChars.
   */
  renewLeases(refs: RenewRef[], ttlMs: number): Promise<RenewOutcome[]>;
  /**
   * leased -> succeeded with a fenced write to the result store, atomically, for many
   * leases in one statement. Each item is fenced on its own: an accepted item is written
   * with its result, a refused one writes nothing and comes back with its typed refusal
   * (TooLarge included). Outcomes are in the order of `items`; a job named twice is
   * completed by its first item only.
   */
  completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]>;
  /**
   * Records a failed attempt: back to ready after the backoff when attempts remain and the
   * failure is retryable, else failed. The result store records it under the same fence.
   */
  failJob(ref: LeaseRef, failure: FailureWrite): Promise<JobRow>;
  /**
   * failJob for many attempts in one statement, each fenced on its own as in completeJobs:
   * an accepted item's row, or its typed refusal (nothing written for it). Outcomes are in
   * the order of `items`; a job named twice is failed by its first accepted item only.
   */
  failJobs(items: FailItem[]): Promise<WriteOutcome[]>;
  /** Hands a lease back unfinished (worker shutting down or over-committed): ready, fence + 1, attempt - 1. */
  releaseJob(ref: LeaseRef): Promise<JobRow>;
  /** releaseJob for many leases in one statement, each fenced and answered on its own, in order. */
  releaseJobs(refs: LeaseRef[]): Promise<WriteOutcome[]>;
  /**
   * The accepted outputs of the named tasks of the job's own run, for the holder of the
   * job's current lease: a fenced read, refused as a write would be (StaleFence,
   * ForgedFence, LeaseLost, NotFound) and reading nothing then. Only a task whose job
   * succeeded is listed, with the result the result store accepted at the job's fence; a
   * task that has not succeeded, or is not in the run, is left out. In the order of
   * `taskIds` (checkUpstreamTasks); TooLarge when the outputs together pass
   * LIMITS.maxUpstreamOutputBytes.
   */
  upstreamOutputs(ref: LeaseRef, taskIds: string[]): Promise<UpstreamOutput[]>;
}

/**
 * Worker credentials: issued, listed and revoked by an operator (the CLI), looked up by
 * the scheduler's authentication. Only the hash of a secret is ever stored.
 */
export interface WorkerCredentialStore {
  createWorkerCredential(input: { id: string; pool: string; secretHash: string }): Promise<WorkerCredentialRow>;
  listWorkerCredentials(): Promise<WorkerCredentialRow[]>;
  /** Revokes the credential (NotFound if there is none) and tells every process at once with a notice. */
  revokeWorkerCredential(input: { id: string }): Promise<WorkerCredentialRow>;
  /** The credential whose secret has this hash, revoked or not, stamped as used now; null if none. */
  findWorkerCredential(input: { secretHash: string }): Promise<WorkerCredentialRow | null>;
}

/**
 * The event log: what happened, for the audits. Reading it back is for tests only
 * (EventReadStore in the testing entry).
 */
export interface EventStore extends StoreTime {
  appendEvents(events: NewEvent[]): Promise<void>;
}

/** Notices between processes (pg_notify in SQL): what a shard leader should react to at once. */
export interface NoticeStore {
  /** Publishes a notice to every subscribed process. */
  notify(notice: StoreNotice): Promise<void>;
  /** Receives notices published by any process; returns an unsubscribe function. */
  subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>>;
}

/**
 * Every role at once, for what owns a store's connection (a process's main, the
 * simulator's world) and the contract suite. Each consumer is typed with the roles it
 * uses: a ShardLeader with LeaderStore, a SchedulerNode with NodeStore, and so on.
 */
export interface Store
  extends
    ClusterStore,
    CatalogueStore,
    RunActionStore,
    RunReadStore,
    LeaderStore,
    WorkerProtocolStore,
    WorkerCredentialStore,
    EventStore,
    NoticeStore,
    PeopleStore,
    AuditStore,
    ResourceLimitStore,
    NotificationStore,
    NotificationLeaderStore {
  close(): Promise<void>;
}

/**
 * Named resource limits (resources/limits.ts): operators set and delete them, the console
 * shows their use, and a node reads their use to plan within what is free (the store
 * itself refuses a grant whose units do not fit, whatever a node planned).
 */
export interface ResourceLimitStore {
  /** Creates or changes a limit; a capacity below 1 is refused (INVALID_INPUT, field capacity). */
  setResourceLimit(input: { name: string; capacity: number }): Promise<ResourceLimitRow>;
  /** Deletes a limit; false if there was none. Jobs that consume it can no longer be granted until it exists again. */
  deleteResourceLimit(name: string): Promise<boolean>;
  /** Every limit by name, with the units live leases hold and the ready jobs that consume it. */
  listResourceLimits(): Promise<ResourceLimitRow[]>;
  /** Every limit's capacity and the units live leases hold, without the waiting count: what a node plans with. */
  resourceUse(): Promise<{ name: string; capacity: number; used: number }[]>;
}

/**
 * Notification channels and rules, set by operators, and the notifications, read by the
 * console and the CLI. A channel's secret is written here and read back by no list: a
 * row says only whether one is set. Its URL, which may hold a credential too, is read back
 * masked (maskChannelUrl) by every call here; only NotificationLeaderStore.dueNotifications,
 * which the delivering leader calls, carries it whole.
 */
export interface NotificationStore {
  /** Throws InvalidInputError naming the field (name empty or taken, kind, url not http(s), secret); a refusal stores nothing. */
  createNotificationChannel(input: NewNotificationChannel): Promise<NotificationChannelRow>;
  listNotificationChannels(): Promise<NotificationChannelRow[]>;
  /** Deletes the channel and its rules; false if there was none. Its notifications stay, and are no longer due. */
  deleteNotificationChannel(id: string): Promise<boolean>;
  /** Throws InvalidInputError naming the field (an unknown channel, event or a bad DAG id); a refusal stores nothing. */
  createNotificationRule(input: NewNotificationRule): Promise<NotificationRuleRow>;
  listNotificationRules(): Promise<NotificationRuleRow[]>;
  deleteNotificationRule(id: string): Promise<boolean>;
  /** Notifications newest first, optionally of one state, at most `limit` (100 by default, 1,000 at most). */
  listNotifications(query: ListNotificationsQuery): Promise<NotificationRow[]>;
  /**
   * Puts a dead notification back to pending, due now, with its attempts at 0 (its last
   * error is kept, to show what failed before). Throws NotFoundError for an unknown id, and
   * InvalidInputError naming `id` for one that is not dead or whose channel was deleted,
   * changing nothing.
   */
  retryNotification(id: string): Promise<NotificationRow>;
}

/**
 * What a shard's leader does with notifications, each under its token's lead check
 * (DeposedLeaderError otherwise): it queues them when it sees an event, claims the due
 * ones and records how each delivery went.
 */
export interface NotificationLeaderStore {
  /**
   * Queues one pending notification per event and matching rule (the rule's DAG, or a
   * rule for every DAG), in the token's shard, keyed `dedupeKeyOf(event, ruleId)` with ON
   * CONFLICT DO NOTHING, so an event seen twice (a retry, two leaders) is queued once.
   * Returns the notifications it created.
   */
  enqueueNotifications(token: LeaderToken, items: NotificationEventItem[]): Promise<NotificationRow[]>;
  /**
   * Claims up to `limit` pending notifications of the shard whose next attempt is due by
   * the store's clock and whose channel still exists: claimed_epoch = the token's epoch
   * and next_attempt_at moved NOTIFY_LIMITS.claimMs on, so a delivery in flight is not
   * claimed again by the same leader. A claim of an earlier epoch counts as due at once:
   * that leader was deposed, and its delivery may never be recorded. In id order.
   */
  dueNotifications(token: LeaderToken, limit: number): Promise<DueNotification[]>;
  /**
   * Records a delivery of a pending notification of the shard: delivered (claimed_epoch the
   * token's); or failed, the claim ended (claimed_epoch null),
   * attempts + 1 and due again after notificationBackoffMs(attempts), or dead once
   * attempts reach NOTIFY_LIMITS.maxAttempts. A notification no longer pending (delivered
   * or dead) is never changed again: null then, as for one that does not exist.
   */
  recordDelivery(token: LeaderToken, notificationId: string, outcome: DeliveryOutcome): Promise<NotificationRow | null>;
  /**
   * Queues run_failed, run_recovered and task_failed for the shard's runs and jobs that
   * ended within NOTIFY_LIMITS.catchUpMs (a succeeded run recovered when its DAG's previous
   * ended run failed; a job failed for good), for the rules that existed when each ended,
   * with the subjects and payloads the live path uses: a new leader calls it, since its
   * predecessor may have finished a run and died before queueing.
   * Returns the notifications it created (none for one queued already).
   */
  catchUpNotifications(token: LeaderToken): Promise<NotificationRow[]>;
  /**
   * The deadline_missed rules, the scheduled DAGs of these shards they cover (every
   * scheduled DAG when a rule names none), and whether any cluster rule exists, with the
   * store's clock: one read per check for all the shards a node leads.
   */
  notificationWatch(shards: number[]): Promise<NotificationWatch>;
  /**
   * Queues deadline_missed for each check whose deadline (scheduledAt + the rule's
   * afterSeconds) has passed by the store's clock, is not before the rule was created nor
   * the slot before the DAG was, and that no run of the DAG for that slot met: only a run
   * that succeeded by the deadline meets it. The DAG must be in the token's shard. Keyed
   * `deadline_missed:<dagId>@<slot ISO>:<ruleId>`, payload { dagId, scheduledAt,
   * afterSeconds, runId, state } (the slot's run, or nulls when none was created). Under the
   * lead check; returns the notifications it created.
   */
  enqueueMissedDeadlines(token: LeaderToken, checks: DeadlineCheck[]): Promise<NotificationRow[]>;
  /**
   * The cluster check, made by one watcher (the node leading the lowest led shard; two
   * watchers across a failover make one notification by the key): queues, in the token's
   * shard, shard_leaderless for each shard whose
   * lease has been out (or that was never led since the cluster began) for longer than a
   * rule's afterSeconds, keyed by the shard and the epoch it was left at, and pool_no_worker
   * for each known pool (a worker seen within NOTIFY_LIMITS.poolLookbackMs) whose workers
   * were all last seen more than workerLiveWindowMs + afterSeconds ago, keyed by the pool and
   * its last worker's last_seen, and for each pool a rule names (or, while a rule watches
   * every pool, a task of a DAG's current version names) with no worker seen in that time,
   * from when it was first named, keyed `none`. Under the lead check; returns the
   * notifications it created.
   */
  enqueueClusterNotifications(token: LeaderToken, options: { workerLiveWindowMs: number }): Promise<NotificationRow[]>;
  /**
   * For each run, the state of its DAG's latest ended run scheduled before it (what a
   * recovery is judged by), read in one statement for the batch; runs with none are left out.
   * With watchedOnly, so are the runs of DAGs no run_recovered rule watches (neither a rule
   * of the DAG nor one of every DAG), and while no such rule exists the read scans nothing.
   */
  previousRunEnds(runIds: readonly RunId[], options?: { watchedOnly?: boolean }): Promise<Map<RunId, RunEnd>>;
}

/**
 * What a scheduler node uses: it contends for shards, leads them, serves the worker protocol
 * and logs events. It reads a queued run with `getRun` when a notice named the run without
 * its facts (older senders).
 */
export interface NodeStore
  extends ClusterStore, LeaderStore, WorkerProtocolStore, EventStore, NoticeStore, NotificationLeaderStore, Pick<ResourceLimitStore, 'resourceUse'>, Pick<RunReadStore, 'getRun'> {
  /**
   * Replaces the store's connections with new ones: calls still waiting on the old ones fail
   * as unavailable, and notice subscriptions carry over. A node calls it when a call got no
   * answer within its deadline (StoreWatch). Optional: a store without connections has none
   * to replace.
   */
  reconnect?(): Promise<void>;
}
