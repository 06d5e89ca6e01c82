import type {
  BackfillAdvance,
  FailItem,
  FailureWrite,
  ResourceLimitRow,
  NewNotificationChannel,
  NotificationChannelRow,
  NewNotificationRule,
  NotificationRuleRow,
  ListNotificationsQuery,
  NotificationRow,
  NotificationEventItem,
  DueNotification,
  DeadlineCheck,
  NotificationWatch,
  DeliveryOutcome,
  BackfillId,
  BackfillRequest,
  BackfillRow,
  BackfillSettled,
  BackfillStep,
  ListBackfillsQuery,
  ContentionAsk,
  ContentionView,
  AcquireResult,
  CompleteItem,
  CreatedRun,
  DagId,
  DagRow,
  DagSpecInput,
  DagVersionRow,
  DeposedLeaderError,
  LeaderGroup,
  DueDag,
  DuePageKey,
  DueReadOptions,
  EventRow,
  Grant,
  GrantedLease,
  JobId,
  JobRow,
  LeaderToken,
  LeaseRef,
  ListDagsQuery,
  ListRunsQuery,
  RunPage,
  AttemptRow,
  LogChunkRow,
  LogChunksQuery,
  RenewRef,
  RunPageQuery,
  NewEvent,
  NewJob,
  RenewOutcome,
  ResultRow,
  RunEnd,
  RunId,
  RunRow,
  ScheduledRunsItem,
  ShardAsk,
  ShardLeaseRow,
  ShardSnapshot,
  Store,
  StoreNotice,
  SweptJob,
  TriggerOptions,
  WorkerCredentialRow,
  WorkerBeat,
  WorkerId,
  WorkerRow,
  WriteOutcome,
  ApiTokenId,
  ApiTokenRow,
  AuditQuery,
  AuditRow,
  NewAuditEntry,
  Principal,
  Role,
  UserCredentials,
  UserId,
  UserName,
  UserRow,
  UpstreamOutput,
  RunActionRequest,
  RunActionRow,
  RunActionWrite,
  RunActionOutcome,
  PutDagAnswer,
  PutDagOptions,
} from '@fenceline/core';
import type { Db } from './db';
import * as backfills from './backfills';
import * as credentials from './credentials';
import * as dags from './dags';
import * as events from './events';
import * as jobWrites from './job-writes';
import * as jobs from './jobs';
import * as leases from './leases';
import * as notices from './notices';
import * as resources from './resources';
import * as notifications from './notifications';
import * as notificationWatch from './notification-watch';
import * as runs from './runs';
import * as runActions from './run-actions';
import { pageRuns } from './run-pages';
import * as shards from './shards';
import { checkLineage } from './lineage';
import * as tick from './tick';
import * as upstream from './upstream';
import * as workers from './workers';
import * as people from './people';
import * as auditLog from './audit-log';
import { mapUnavailableErrors } from './unavailable';

/** How often at most a standby's answers replace the pool: a promotion takes seconds. */
const STANDBY_RECONNECT_EVERY_MS = 3_000;

/**
 * The Store contract on PostgreSQL. Every method is one function in a file named for its
 * concern, and each is one statement or one short transaction with all time taken from
 * the store's clock; this class only routes calls and owns the connection. Its methods
 * are grouped by the role of the Store they belong to (packages/core/src/store.ts).
 */
export class SqlStore implements Store {
  private current: Db;
  /** When a standby's answer last replaced the pool (wall clock), so a failover replaces it at most every few seconds. */
  private standbyReconnectAtMs = 0;
  /** The notice listeners subscribed, so a reconnect can subscribe them again on the new connections. */
  private readonly listeners = new Map<(notice: StoreNotice) => void, () => Promise<void>>();

  constructor(
    db: Db,
    /** Opens a new pool with the same settings, for reconnect(); without it there is nothing to reconnect with. */
    private readonly connectAgain?: () => Db,
  ) {
    this.current = db;
  }

  /** The drizzle handle (over postgres.js), for tools that need plain queries. */
  get db(): Db {
    return this.current;
  }

  // ---- the store's clock -------------------------------------------------------------------
  now(): Promise<Date> {
    return tick.now(this.db);
  }

  // ---- ClusterStore ------------------------------------------------------------------------
  initCluster(shardCount: number): Promise<{ shardCount: number }> {
    return shards.initCluster(this.db, shardCount);
  }
  acquireShard(ask: ShardAsk): Promise<AcquireResult | null> {
    return shards.acquireShard(this.db, ask);
  }
  renewShard(token: LeaderToken, ttlMs: number): Promise<Date> {
    return shards.renewShard(this.db, token, ttlMs);
  }
  releaseShard(token: LeaderToken): Promise<void> {
    return shards.releaseShard(this.db, token);
  }
  listShards(): Promise<ShardLeaseRow[]> {
    return shards.listShards(this.db);
  }
  async contentionView(ask: ContentionAsk): Promise<ContentionView> {
    // Every node reads the shards this way a few times a minute; it is also where a new
    // timeline (a promoted standby) is noticed and fenced before any shard is taken.
    await checkLineage(this.db);
    return shards.contentionView(this.db, ask);
  }
  leaveCluster(nodeId: string): Promise<void> {
    return shards.leaveCluster(this.db, nodeId);
  }
  listWorkers(withinMs: number): Promise<WorkerRow[]> {
    return workers.listWorkers(this.db, withinMs);
  }

  // ---- NotificationStore and NotificationLeaderStore ------------------------------------------
  createNotificationChannel(input: NewNotificationChannel): Promise<NotificationChannelRow> {
    return notifications.createNotificationChannel(this.db, input);
  }
  listNotificationChannels(): Promise<NotificationChannelRow[]> {
    return notifications.listNotificationChannels(this.db);
  }
  deleteNotificationChannel(id: string): Promise<boolean> {
    return notifications.deleteNotificationChannel(this.db, id);
  }
  createNotificationRule(input: NewNotificationRule): Promise<NotificationRuleRow> {
    return notifications.createNotificationRule(this.db, input);
  }
  listNotificationRules(): Promise<NotificationRuleRow[]> {
    return notifications.listNotificationRules(this.db);
  }
  deleteNotificationRule(id: string): Promise<boolean> {
    return notifications.deleteNotificationRule(this.db, id);
  }
  listNotifications(query: ListNotificationsQuery): Promise<NotificationRow[]> {
    return notifications.listNotifications(this.db, query);
  }
  retryNotification(id: string): Promise<NotificationRow> {
    return notifications.retryNotification(this.db, id);
  }
  enqueueNotifications(token: LeaderToken, items: NotificationEventItem[]): Promise<NotificationRow[]> {
    return notifications.enqueueNotifications(this.db, token, items);
  }
  catchUpNotifications(token: LeaderToken): Promise<NotificationRow[]> {
    return notifications.catchUpNotifications(this.db, token);
  }
  dueNotifications(token: LeaderToken, limit: number): Promise<DueNotification[]> {
    return notifications.dueNotifications(this.db, token, limit);
  }
  recordDelivery(token: LeaderToken, notificationId: string, outcome: DeliveryOutcome): Promise<NotificationRow | null> {
    return notifications.recordDelivery(this.db, token, notificationId, outcome);
  }
  notificationWatch(shards: number[]): Promise<NotificationWatch> {
    return notificationWatch.notificationWatch(this.db, shards);
  }
  enqueueMissedDeadlines(token: LeaderToken, checks: DeadlineCheck[]): Promise<NotificationRow[]> {
    return notificationWatch.enqueueMissedDeadlines(this.db, token, checks);
  }
  enqueueClusterNotifications(token: LeaderToken, options: { workerLiveWindowMs: number }): Promise<NotificationRow[]> {
    return notificationWatch.enqueueClusterNotifications(this.db, token, options);
  }
  previousRunEnds(runIds: readonly RunId[], options?: { watchedOnly?: boolean }): Promise<Map<RunId, RunEnd>> {
    return notifications.previousRunEnds(this.db, runIds, options);
  }

  // ---- ResourceLimitStore -------------------------------------------------------------------
  setResourceLimit(input: { name: string; capacity: number }): Promise<ResourceLimitRow> {
    return resources.setResourceLimit(this.db, input);
  }
  deleteResourceLimit(name: string): Promise<boolean> {
    return resources.deleteResourceLimit(this.db, name);
  }
  listResourceLimits(): Promise<ResourceLimitRow[]> {
    return resources.listResourceLimits(this.db);
  }
  resourceUse(): Promise<{ name: string; capacity: number; used: number }[]> {
    return resources.resourceUse(this.db);
  }

  // ---- CatalogueStore ----------------------------------------------------------------------
  putDag(spec: DagSpecInput, shardCount: number, options?: PutDagOptions): Promise<PutDagAnswer> {
    return dags.putDag(this.db, spec, shardCount, options);
  }
  /**
   * Several specs, all or none, in one transaction (what `fenceline apply` with many files
   * needs). Not on the Store interface: nothing on the scheduling path stores DAGs.
   */
  putDags(specs: DagSpecInput[], shardCount: number): Promise<dags.PutDagResult[]> {
    return dags.putDags(this.db, specs, shardCount);
  }
  getDag(dagId: DagId): Promise<DagRow> {
    return dags.getDag(this.db, dagId);
  }
  listDagVersions(dagId: DagId): Promise<DagVersionRow[]> {
    return dags.listDagVersions(this.db, dagId);
  }
  listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }> {
    return dags.listDags(this.db, query);
  }
  setPaused(dagId: DagId, paused: boolean): Promise<DagRow> {
    return dags.setPaused(this.db, dagId, paused);
  }
  triggerRun(dagId: DagId, options?: TriggerOptions): Promise<RunRow> {
    return runs.triggerRun(this.db, dagId, options);
  }
  createBackfill(request: BackfillRequest): Promise<BackfillRow> {
    return backfills.createBackfill(this.db, request);
  }
  getBackfill(backfillId: BackfillId): Promise<BackfillRow> {
    return backfills.getBackfill(this.db, backfillId);
  }
  listBackfills(query: ListBackfillsQuery): Promise<BackfillRow[]> {
    return backfills.listBackfills(this.db, query);
  }
  cancelBackfill(backfillId: BackfillId): Promise<BackfillRow> {
    return backfills.cancelBackfill(this.db, backfillId);
  }

  // ---- RunActionStore ----------------------------------------------------------------------
  requestRunAction(req: RunActionRequest): Promise<RunActionRow> {
    return runActions.requestRunAction(this.db, req);
  }
  getRunAction(actionId: string): Promise<RunActionRow> {
    return runActions.getRunAction(this.db, actionId);
  }
  listRunActions(runId: RunId): Promise<RunActionRow[]> {
    return runActions.listRunActions(this.db, runId);
  }

  // ---- RunReadStore ------------------------------------------------------------------------
  getRun(runId: RunId): Promise<RunRow> {
    return runs.getRun(this.db, runId);
  }
  listRuns(query: ListRunsQuery): Promise<RunRow[]> {
    return runs.listRuns(this.db, query);
  }
  pageRuns(query: RunPageQuery): Promise<RunPage> {
    return pageRuns(this.db, query);
  }
  listJobs(runId: RunId): Promise<JobRow[]> {
    return jobs.listJobs(this.db, runId);
  }
  getJob(jobId: JobId): Promise<JobRow> {
    return jobs.getJob(this.db, jobId);
  }
  getResult(jobId: JobId): Promise<ResultRow | null> {
    return jobs.getResult(this.db, jobId);
  }

  listRunResults(runId: RunId): Promise<ResultRow[]> {
    return jobs.listRunResults(this.db, runId);
  }
  listAttempts(jobId: JobId): Promise<AttemptRow[]> {
    return jobs.listAttempts(this.db, jobId);
  }
  listLogChunks(query: LogChunksQuery): Promise<LogChunkRow[]> {
    return jobs.listLogChunks(this.db, query);
  }
  listLeasedJobs(workerId?: WorkerId): Promise<JobRow[]> {
    return jobs.listLeasedJobs(this.db, workerId);
  }

  // ---- LeaderStore -------------------------------------------------------------------------
  dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options?: DueReadOptions): Promise<{ now: Date; dags: DueDag[] }> {
    return tick.dueDags(this.db, tokens, limit, after, options);
  }
  loadShard(token: LeaderToken): Promise<ShardSnapshot> {
    return tick.loadShard(this.db, token);
  }
  queuedRuns(token: LeaderToken): Promise<RunRow[]> {
    return runs.queuedRuns(this.db, token);
  }
  getDagVersions(keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]> {
    return dags.getDagVersions(this.db, keys);
  }
  getJobs(jobIds: JobId[]): Promise<JobRow[]> {
    return jobs.getJobs(this.db, jobIds);
  }
  createScheduledRunsAcross(groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]> {
    return runs.createScheduledRunsAcross(this.db, groups);
  }
  startRunsAcross(groups: LeaderGroup<{ runId: RunId; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]> {
    return runs.startRunsAcross(this.db, groups);
  }
  promoteJobsAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return jobs.promoteJobsAcross(this.db, groups);
  }
  markUpstreamFailedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return jobs.markUpstreamFailedAcross(this.db, groups);
  }
  markSkippedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return jobs.markSkippedAcross(this.db, groups);
  }
  finishRunsAcross(groups: LeaderGroup<{ runId: RunId; state: 'succeeded' | 'failed' | 'cancelled' }>[]): Promise<(boolean[] | DeposedLeaderError)[]> {
    return runs.finishRunsAcross(this.db, groups);
  }
  pendingRunActions(token: LeaderToken): Promise<RunActionRow[]> {
    return runActions.pendingRunActions(this.db, token);
  }
  readRun(runId: RunId): Promise<{ run: RunRow; jobs: JobRow[] } | null> {
    return runActions.readRun(this.db, runId);
  }
  applyRunAction(token: LeaderToken, write: RunActionWrite): Promise<RunActionOutcome> {
    return runActions.applyRunAction(this.db, token, write);
  }
  grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
    return leases.grantLeasesMany(this.db, items, ttlMs);
  }
  sweepExpired(token: LeaderToken, limit: number): Promise<SweptJob[]> {
    return leases.sweepExpired(this.db, token, limit);
  }
  openBackfills(tokens: LeaderToken[]): Promise<BackfillRow[]> {
    return backfills.openBackfills(this.db, tokens);
  }
  advanceBackfill(token: LeaderToken, step: BackfillStep): Promise<BackfillAdvance | null> {
    return backfills.advanceBackfill(this.db, token, step);
  }
  settleBackfill(token: LeaderToken, backfillId: BackfillId): Promise<BackfillSettled | null> {
    return backfills.settleBackfill(this.db, token, backfillId);
  }

  // ---- WorkerProtocolStore -----------------------------------------------------------------
  registerWorker(worker: { id: WorkerId; slots: number; nodeId: string | null; meta?: Record<string, unknown>; session: string; credentialId: string | null }): Promise<WorkerRow> {
    return workers.registerWorker(this.db, worker);
  }
  workerSession(workerId: WorkerId): Promise<string | null> {
    return workers.workerSession(this.db, workerId);
  }
  heartbeatWorkers(beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs?: number): Promise<void> {
    return workers.heartbeatWorkers(this.db, beats, nodeId, skipSeenWithinMs);
  }
  renewLeases(refs: RenewRef[], ttlMs: number): Promise<RenewOutcome[]> {
    return leases.renewLeases(this.db, refs, ttlMs);
  }
  completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]> {
    return jobWrites.completeJobs(this.db, items);
  }
  failJob(ref: LeaseRef, failure: FailureWrite): Promise<JobRow> {
    return jobWrites.failJob(this.db, ref, failure);
  }
  releaseJob(ref: LeaseRef): Promise<JobRow> {
    return jobWrites.releaseJob(this.db, ref);
  }
  failJobs(items: FailItem[]): Promise<WriteOutcome[]> {
    return jobWrites.failJobs(this.db, items);
  }
  releaseJobs(refs: LeaseRef[]): Promise<WriteOutcome[]> {
    return jobWrites.releaseJobs(this.db, refs);
  }

  upstreamOutputs(ref: LeaseRef, taskIds: string[]): Promise<UpstreamOutput[]> {
    return upstream.upstreamOutputs(this.db, ref, taskIds);
  }

  // ---- EventStore and NoticeStore ----------------------------------------------------------
  appendEvents(newEvents: NewEvent[]): Promise<void> {
    return events.appendEvents(this.db, newEvents);
  }
  /** For the tests only (EventReadStore in @fenceline/core/testing); no role of the Store lists events. */
  listEvents(query: { afterId?: string; runId?: string; jobId?: string; type?: string; limit?: number }): Promise<EventRow[]> {
    return events.listEvents(this.db, query);
  }
  // ---- WorkerCredentialStore --------------------------------------------------------------
  createWorkerCredential(input: { id: string; pool: string; secretHash: string }): Promise<WorkerCredentialRow> {
    return credentials.createWorkerCredential(this.db, input);
  }
  listWorkerCredentials(): Promise<WorkerCredentialRow[]> {
    return credentials.listWorkerCredentials(this.db);
  }
  revokeWorkerCredential(input: { id: string }): Promise<WorkerCredentialRow> {
    return credentials.revokeWorkerCredential(this.db, input);
  }
  findWorkerCredential(input: { secretHash: string }): Promise<WorkerCredentialRow | null> {
    return credentials.findWorkerCredential(this.db, input);
  }

  notify(notice: StoreNotice): Promise<void> {
    return notices.notify(this.db, notice);
  }
  async subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>> {
    this.listeners.set(listener, await notices.subscribe(this.db, listener));
    return async () => {
      const unlisten = this.listeners.get(listener);
      this.listeners.delete(listener);
      await unlisten?.();
    };
  }

  // ---- PeopleStore -------------------------------------------------------------------------
  createUser(input: { name: UserName; role: Role; passwordHash: string }): Promise<UserRow> {
    return people.createUser(this.db, input);
  }
  userCredentials(input: { name: UserName }): Promise<UserCredentials | null> {
    return people.userCredentials(this.db, input);
  }
  getUser(input: { userId: UserId }): Promise<UserRow> {
    return people.getUser(this.db, input);
  }
  listUsers(): Promise<UserRow[]> {
    return people.listUsers(this.db);
  }
  updateUser(input: { userId: UserId; role?: Role; disabled?: boolean }): Promise<UserRow> {
    return people.updateUser(this.db, input);
  }
  setPassword(input: { userId: UserId; passwordHash: string }): Promise<UserRow> {
    return people.setPassword(this.db, input);
  }
  createSession(input: { secretHash: string; userId: UserId; ttlMs: number }): Promise<{ expiresAt: Date }> {
    return people.createSession(this.db, input);
  }
  sessionPrincipal(input: { secretHash: string }): Promise<Principal | null> {
    return people.sessionPrincipal(this.db, input);
  }
  deleteSession(input: { secretHash: string }): Promise<void> {
    return people.deleteSession(this.db, input);
  }
  revokeSessions(input: { userId: UserId }): Promise<{ revoked: number }> {
    return people.revokeSessions(this.db, input);
  }
  createApiToken(input: { userId: UserId; name: string; role: Role; secretHash: string; ttlMs: number }): Promise<ApiTokenRow> {
    return people.createApiToken(this.db, input);
  }
  apiTokenPrincipal(input: { secretHash: string }): Promise<Principal | null> {
    return people.apiTokenPrincipal(this.db, input);
  }
  listApiTokens(input: { userId?: UserId }): Promise<ApiTokenRow[]> {
    return people.listApiTokens(this.db, input);
  }
  revokeApiToken(input: { tokenId: ApiTokenId }): Promise<ApiTokenRow> {
    return people.revokeApiToken(this.db, input);
  }

  // ---- AuditStore --------------------------------------------------------------------------
  appendAudit(entry: NewAuditEntry): Promise<AuditRow> {
    return auditLog.appendAudit(this.db, entry);
  }
  listAudit(query: AuditQuery): Promise<AuditRow[]> {
    return auditLog.listAudit(this.db, query);
  }

  async close(): Promise<void> {
    await this.db.$client.end({ timeout: 5 });
  }

  /**
   * Replaces the pool with a new one: new statements go to new connections at once, and the
   * old pool is ended without waiting, so a statement still waiting there (on a connection
   * whose server is gone without a word) fails as unavailable instead of waiting forever.
   * The notice listeners are subscribed again on the new pool.
   */
  async reconnect(): Promise<void> {
    if (!this.connectAgain) return;
    const old = this.current;
    this.current = this.connectAgain();
    await old.$client.end({ timeout: 0 }).catch(() => undefined);
    await Promise.all([...this.listeners.keys()].map((listener) => this.resubscribe(listener, this.current)));
  }

  /**
   * A statement was answered by a standby: connections that reached a node in recovery
   * stay there, failing every write, until the pool is replaced. With a multi-host URL the
   * new pool's connections go to the node that is primary now (or fail as unavailable
   * until one is promoted), so a failover cannot leave the store stuck on its old primary.
   */
  standbyAnswered(): void {
    const now = Date.now();
    if (!this.connectAgain || now - this.standbyReconnectAtMs < STANDBY_RECONNECT_EVERY_MS) return;
    this.standbyReconnectAtMs = now;
    void this.reconnect().catch(() => undefined);
  }

  /** Subscribes a listener on a new pool, trying again each second while the store is away; the nodes' reconciliation covers notices missed meanwhile. */
  private async resubscribe(listener: (notice: StoreNotice) => void, db: Db): Promise<void> {
    while (this.listeners.has(listener) && this.current === db) {
      try {
        this.listeners.set(listener, await notices.subscribe(db, listener));
        return;
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
    }
  }
}

// A lost connection reaches the scheduling logic as core's StoreUnavailableError, whichever
// method met it, so the logic can tell an outage it waits out from a bug it must report.
mapUnavailableErrors(SqlStore.prototype, (store) => (store as SqlStore).standbyAnswered());
