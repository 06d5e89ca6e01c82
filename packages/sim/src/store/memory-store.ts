import type {
  BackfillAdvance,
  BackfillId,
  BackfillRequest,
  BackfillRow,
  BackfillSettled,
  BackfillStep,
  ListBackfillsQuery,
  AcquireResult,
  CompleteItem,
  FailItem,
  FailureWrite,
  ContentionAsk,
  ContentionView,
  CreatedRun,
  DagId,
  DagRow,
  DagSpecInput,
  PutDagAnswer,
  PutDagOptions,
  DagVersionRow,
  DeposedLeaderError,
  DueDag,
  DuePageKey,
  DueReadOptions,
  EventRow,
  Grant,
  GrantedLease,
  JobId,
  JobRow,
  LeaderGroup,
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
  WorkerBeat,
  WorkerId,
  WorkerCredentialRow,
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
  RunActionOutcome,
  RunActionRequest,
  RunActionRow,
  RunActionWrite,
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
} from '@fenceline/core';
import { MemoryAudit } from './memory-audit';
import { MemoryBackfills } from './memory-backfills';
import { MemoryCatalogue } from './memory-catalogue';
import { MemoryCluster } from './memory-cluster';
import { MemoryCredentials } from './memory-credentials';
import type { EventQuery } from './memory-event-log';
import { MemoryLeader } from './memory-leader';
import { MemoryLeases } from './memory-leases';
import { MemoryPeople } from './memory-people';
import { MemoryReads } from './memory-reads';
import { MemoryResources } from './memory-resources';
import { MemoryNotifications } from './memory-notifications';
import { MemoryRunActions } from './memory-run-actions';
import { date, type MemJob, type MemRun, type MemShard } from './memory-rows';
import { MemoryTables } from './memory-tables';
import { MemoryWorkerWrites } from './memory-worker-writes';
import type { NewWorker } from './memory-workers';
import type { StoreObserver } from './records';

export type { MemJob, MemRun } from './memory-rows';

export interface MemoryStoreOptions {
  /** The store's own clock in epoch milliseconds (the simulation's true time). */
  nowMs: () => number;
  /** Told of every write that lands, at the instant it lands (the invariant checker). */
  observer?: StoreObserver;
  /** How many event-log rows to keep; the oldest are dropped beyond it (a day of mission load logs millions). */
  eventLogLimit?: number;
}

/**
 * The Store contract in memory, with the SQL store's semantics and refusals: the same
 * conditional updates, the same typed errors, the same orderings (ids ascending, due DAGs
 * by next_run_at then id, expired leases by expiry then id), all time from the store's
 * own clock. Every method runs its whole effect synchronously when it is called, which
 * makes each one atomic, and returns a promise; the simulator puts a link in front of it
 * (world/linked-store.ts) that carries calls and replies through the virtual timer queue,
 * so latency, slow links and cuts sit between a process and the store, not inside it.
 *
 * The work is done by one part per role of the Store, over shared tables
 * (memory-tables.ts): the cluster, the catalogue, the reads, the leader's writes, the
 * leases and the worker writes. This class joins them; each method hands the part's own
 * promise back unchanged, so a call settles exactly as the part's does.
 *
 * The rules that keep "once" true are small protected methods here (leads, fenceAccepts,
 * revokedFence, grantable, slotTaken), which every part calls through the tables, so a
 * test can subclass the store, break exactly one of them, and show that the invariant
 * checker notices.
 */
export class MemoryStore implements Store {
  protected readonly nowMs: () => number;
  private readonly tables: MemoryTables;
  private readonly cluster: MemoryCluster;
  private readonly catalogue: MemoryCatalogue;
  private readonly reads: MemoryReads;
  private readonly leader: MemoryLeader;
  private readonly leases: MemoryLeases;
  private readonly workerWrites: MemoryWorkerWrites;
  private readonly people: MemoryPeople;
  private readonly audit: MemoryAudit;
  private readonly credentials: MemoryCredentials;
  private readonly actions: MemoryRunActions;
  private readonly backfills: MemoryBackfills;
  private readonly resources: MemoryResources;
  private readonly notifications: MemoryNotifications;

  constructor(options: MemoryStoreOptions) {
    this.nowMs = options.nowMs;
    this.tables = new MemoryTables(
      options.nowMs,
      {
        leads: (token, nowMs) => this.leads(token, nowMs),
        fenceAccepts: (job, ref, nowMs) => this.fenceAccepts(job, ref, nowMs),
        revokedFence: (fence) => this.revokedFence(fence),
        grantable: (job, nowMs) => this.grantable(job, nowMs),
        slotTaken: (dagId, scheduledAtMs) => this.slotTaken(dagId, scheduledAtMs),
      },
      options.eventLogLimit ?? Number.POSITIVE_INFINITY,
    );
    this.tables.observer = options.observer;
    this.cluster = new MemoryCluster(this.tables);
    this.catalogue = new MemoryCatalogue(this.tables);
    this.reads = new MemoryReads(this.tables);
    this.leader = new MemoryLeader(this.tables);
    this.resources = new MemoryResources(this.tables);
    this.leases = new MemoryLeases(this.tables, this.resources);
    this.workerWrites = new MemoryWorkerWrites(this.tables);
    this.people = new MemoryPeople(options.nowMs);
    this.audit = new MemoryAudit(options.nowMs);
    this.credentials = new MemoryCredentials(this.tables);
    this.actions = new MemoryRunActions(this.tables);
    this.backfills = new MemoryBackfills(this.tables, this.actions);
    this.notifications = new MemoryNotifications(this.tables);
  }

  /** Attaches the invariant checker (one observer at a time). */
  observe(observer: StoreObserver | undefined): void {
    this.tables.observer = observer;
  }

  // ---- the rules, overridable one at a time by deliberately broken test stores ----------

  /** The lead check: the token's node holds the shard under that epoch and the lease is live. */
  protected leads(token: LeaderToken, nowMs: number): boolean {
    const row = this.tables.shards.get(token.shard);
    return !!row && row.holder === token.nodeId && row.epoch === token.epoch && row.expiresAtMs !== null && row.expiresAtMs > nowMs;
  }

  /**
   * The fenced-write check: the fence on record, this holder, a live lease, and the
   * session it was granted to, still its holder's current one (null: the node's own hand-back).
   */
  protected fenceAccepts(job: MemJob, ref: LeaseRef, nowMs: number): boolean {
    const session = ref.session === null || (job.holderSession === ref.session && this.tables.workerTable.session(ref.workerId) === ref.session);
    return job.fence === ref.fence && job.holder === ref.workerId && job.state === 'leased' && job.leaseExpiresAtMs !== null && job.leaseExpiresAtMs > nowMs && session;
  }

  /** The fence a revocation (sweep or hand-back) leaves on the job. */
  protected revokedFence(fence: number): number {
    return fence + 1;
  }

  /** A job may be leased only when it is ready and its backoff has passed. */
  protected grantable(job: MemJob, nowMs: number): boolean {
    return job.state === 'ready' && (job.nextAttemptAtMs === null || job.nextAttemptAtMs <= nowMs);
  }

  /** The unique index on (dag_id, scheduled_at). */
  protected slotTaken(dagId: string, scheduledAtMs: number): boolean {
    return this.tables.runKeys.has(`${dagId}\u0000${scheduledAtMs}`);
  }

  // ---- read access for the simulator's checker and reports (not part of Store) ----------

  allJobs(): IterableIterator<MemJob> {
    return this.tables.jobs.values();
  }

  allRuns(): IterableIterator<MemRun> {
    return this.tables.runs.values();
  }

  jobById(jobId: string): MemJob | undefined {
    return this.tables.jobs.get(jobId);
  }

  resultOf(jobId: string): ResultRow | undefined {
    return this.tables.results.get(jobId);
  }

  shardRow(shard: number): Readonly<MemShard> | undefined {
    return this.tables.shards.get(shard);
  }

  dagCount(): number {
    return this.tables.dags.size;
  }

  // ---- the store's clock ----------------------------------------------------------------

  async now(): Promise<Date> {
    return date(this.nowMs());
  }

  // ---- ClusterStore (memory-cluster.ts) ------------------------------------------------------

  initCluster(shardCount: number): Promise<{ shardCount: number }> {
    return this.cluster.initCluster(shardCount);
  }
  acquireShard(ask: ShardAsk): Promise<AcquireResult | null> {
    return this.cluster.acquireShard(ask);
  }
  renewShard(token: LeaderToken, ttlMs: number): Promise<Date> {
    return this.cluster.renewShard(token, ttlMs);
  }
  releaseShard(token: LeaderToken): Promise<void> {
    return this.cluster.releaseShard(token);
  }
  contentionView(ask: ContentionAsk): Promise<ContentionView> {
    return this.cluster.contentionView(ask);
  }
  leaveCluster(nodeId: string): Promise<void> {
    return this.cluster.leaveCluster(nodeId);
  }
  listShards(): Promise<ShardLeaseRow[]> {
    return this.cluster.listShards();
  }
  listWorkers(withinMs: number): Promise<WorkerRow[]> {
    return this.cluster.listWorkers(withinMs);
  }

  // ---- NotificationStore and NotificationLeaderStore ------------------------------------------
  createNotificationChannel(input: NewNotificationChannel): Promise<NotificationChannelRow> {
    return this.notifications.createNotificationChannel(input);
  }
  listNotificationChannels(): Promise<NotificationChannelRow[]> {
    return this.notifications.listNotificationChannels();
  }
  deleteNotificationChannel(id: string): Promise<boolean> {
    return this.notifications.deleteNotificationChannel(id);
  }
  createNotificationRule(input: NewNotificationRule): Promise<NotificationRuleRow> {
    return this.notifications.createNotificationRule(input);
  }
  listNotificationRules(): Promise<NotificationRuleRow[]> {
    return this.notifications.listNotificationRules();
  }
  deleteNotificationRule(id: string): Promise<boolean> {
    return this.notifications.deleteNotificationRule(id);
  }
  listNotifications(query: ListNotificationsQuery): Promise<NotificationRow[]> {
    return this.notifications.listNotifications(query);
  }
  retryNotification(id: string): Promise<NotificationRow> {
    return this.notifications.retryNotification(id);
  }
  enqueueNotifications(token: LeaderToken, items: NotificationEventItem[]): Promise<NotificationRow[]> {
    return this.notifications.enqueueNotifications(token, items);
  }
  catchUpNotifications(token: LeaderToken): Promise<NotificationRow[]> {
    return this.notifications.catchUpNotifications(token);
  }
  dueNotifications(token: LeaderToken, limit: number): Promise<DueNotification[]> {
    return this.notifications.dueNotifications(token, limit);
  }
  recordDelivery(token: LeaderToken, notificationId: string, outcome: DeliveryOutcome): Promise<NotificationRow | null> {
    return this.notifications.recordDelivery(token, notificationId, outcome);
  }
  notificationWatch(shards: number[]): Promise<NotificationWatch> {
    return this.notifications.notificationWatch(shards);
  }
  enqueueMissedDeadlines(token: LeaderToken, checks: DeadlineCheck[]): Promise<NotificationRow[]> {
    return this.notifications.enqueueMissedDeadlines(token, checks);
  }
  enqueueClusterNotifications(token: LeaderToken, options: { workerLiveWindowMs: number }): Promise<NotificationRow[]> {
    return this.notifications.enqueueClusterNotifications(token, options);
  }
  previousRunEnds(runIds: readonly RunId[], options?: { watchedOnly?: boolean }): Promise<Map<RunId, RunEnd>> {
    return this.notifications.previousRunEnds(runIds, options);
  }

  setResourceLimit(input: { name: string; capacity: number }): Promise<ResourceLimitRow> {
    return this.resources.setResourceLimit(input);
  }
  deleteResourceLimit(name: string): Promise<boolean> {
    return this.resources.deleteResourceLimit(name);
  }
  listResourceLimits(): Promise<ResourceLimitRow[]> {
    return this.resources.listResourceLimits();
  }
  resourceUse(): Promise<{ name: string; capacity: number; used: number }[]> {
    return this.resources.resourceUse();
  }

  // ---- CatalogueStore (memory-catalogue.ts) --------------------------------------------------

  putDag(input: DagSpecInput, shardCount: number, options?: PutDagOptions): Promise<PutDagAnswer> {
    return this.catalogue.putDag(input, shardCount, options);
  }
  getDag(dagId: DagId): Promise<DagRow> {
    return this.catalogue.getDag(dagId);
  }
  listDagVersions(dagId: DagId): Promise<DagVersionRow[]> {
    return this.catalogue.listDagVersions(dagId);
  }
  listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }> {
    return this.catalogue.listDags(query);
  }
  setPaused(dagId: DagId, paused: boolean): Promise<DagRow> {
    return this.catalogue.setPaused(dagId, paused);
  }
  triggerRun(dagId: DagId, options?: TriggerOptions): Promise<RunRow> {
    return this.catalogue.triggerRun(dagId, options);
  }
  createBackfill(request: BackfillRequest): Promise<BackfillRow> {
    return this.backfills.createBackfill(request);
  }
  getBackfill(backfillId: BackfillId): Promise<BackfillRow> {
    return this.backfills.getBackfill(backfillId);
  }
  listBackfills(query: ListBackfillsQuery): Promise<BackfillRow[]> {
    return this.backfills.listBackfills(query);
  }
  cancelBackfill(backfillId: BackfillId): Promise<BackfillRow> {
    return this.backfills.cancelBackfill(backfillId);
  }

  // ---- RunActionStore and the leader's part of it (memory-run-actions.ts) -------------------

  requestRunAction(req: RunActionRequest): Promise<RunActionRow> {
    return this.actions.requestRunAction(req);
  }
  getRunAction(actionId: string): Promise<RunActionRow> {
    return this.actions.getRunAction(actionId);
  }
  listRunActions(runId: RunId): Promise<RunActionRow[]> {
    return this.actions.listRunActions(runId);
  }
  pendingRunActions(token: LeaderToken): Promise<RunActionRow[]> {
    return this.actions.pendingRunActions(token);
  }
  readRun(runId: RunId): Promise<{ run: RunRow; jobs: JobRow[] } | null> {
    return this.actions.readRun(runId);
  }
  applyRunAction(token: LeaderToken, write: RunActionWrite): Promise<RunActionOutcome> {
    return this.actions.applyRunAction(token, write);
  }

  // ---- RunReadStore (memory-reads.ts) ---------------------------------------------------------

  getRun(runId: RunId): Promise<RunRow> {
    return this.reads.getRun(runId);
  }
  listRuns(query: ListRunsQuery): Promise<RunRow[]> {
    return this.reads.listRuns(query);
  }
  pageRuns(query: RunPageQuery): Promise<RunPage> {
    return this.reads.pageRuns(query);
  }
  listJobs(runId: RunId): Promise<JobRow[]> {
    return this.reads.listJobs(runId);
  }
  getJob(jobId: JobId): Promise<JobRow> {
    return this.reads.getJob(jobId);
  }
  getResult(jobId: JobId): Promise<ResultRow | null> {
    return this.reads.getResult(jobId);
  }

  listRunResults(runId: RunId): Promise<ResultRow[]> {
    return this.reads.listRunResults(runId);
  }
  listAttempts(jobId: JobId): Promise<AttemptRow[]> {
    return this.reads.listAttempts(jobId);
  }
  listLogChunks(query: LogChunksQuery): Promise<LogChunkRow[]> {
    return this.reads.listLogChunks(query);
  }
  listLeasedJobs(workerId?: WorkerId): Promise<JobRow[]> {
    return this.reads.listLeasedJobs(workerId);
  }

  // ---- LeaderStore (memory-leader.ts, memory-leases.ts) --------------------------------------

  dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options?: DueReadOptions): Promise<{ now: Date; dags: DueDag[] }> {
    return this.leader.dueDags(tokens, limit, after, options);
  }
  loadShard(token: LeaderToken): Promise<ShardSnapshot> {
    return this.leader.loadShard(token);
  }
  queuedRuns(token: LeaderToken): Promise<RunRow[]> {
    return this.leader.queuedRuns(token);
  }
  getDagVersions(keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]> {
    return this.leader.getDagVersions(keys);
  }
  getJobs(jobIds: JobId[]): Promise<JobRow[]> {
    return this.leader.getJobs(jobIds);
  }
  createScheduledRunsAcross(groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]> {
    return this.leader.createScheduledRunsAcross(groups);
  }
  startRunsAcross(groups: LeaderGroup<{ runId: RunId; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]> {
    return this.leader.startRunsAcross(groups);
  }
  promoteJobsAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.leader.promoteJobsAcross(groups);
  }
  markUpstreamFailedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.leader.markUpstreamFailedAcross(groups);
  }
  markSkippedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.leader.markSkippedAcross(groups);
  }
  finishRunsAcross(groups: LeaderGroup<{ runId: RunId; state: 'succeeded' | 'failed' | 'cancelled' }>[]): Promise<(boolean[] | DeposedLeaderError)[]> {
    return this.leader.finishRunsAcross(groups);
  }
  grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
    return this.leases.grantLeasesMany(items, ttlMs);
  }
  sweepExpired(token: LeaderToken, limit: number): Promise<SweptJob[]> {
    return this.leases.sweepExpired(token, limit);
  }
  openBackfills(tokens: LeaderToken[]): Promise<BackfillRow[]> {
    return this.backfills.openBackfills(tokens);
  }
  advanceBackfill(token: LeaderToken, step: BackfillStep): Promise<BackfillAdvance | null> {
    return this.backfills.advanceBackfill(token, step);
  }
  settleBackfill(token: LeaderToken, backfillId: BackfillId): Promise<BackfillSettled | null> {
    return this.backfills.settleBackfill(token, backfillId);
  }

  // ---- WorkerProtocolStore (memory-worker-writes.ts) -----------------------------------------

  registerWorker(worker: NewWorker): Promise<WorkerRow> {
    return this.workerWrites.registerWorker(worker);
  }
  async workerSession(workerId: WorkerId): Promise<string | null> {
    return this.tables.workerTable.session(workerId);
  }
  heartbeatWorkers(beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs?: number): Promise<void> {
    return this.workerWrites.heartbeatWorkers(beats, nodeId, skipSeenWithinMs);
  }
  renewLeases(refs: RenewRef[], ttlMs: number): Promise<RenewOutcome[]> {
    return this.workerWrites.renewLeases(refs, ttlMs);
  }
  completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]> {
    return this.workerWrites.completeJobs(items);
  }
  failJob(ref: LeaseRef, failure: FailureWrite): Promise<JobRow> {
    return this.workerWrites.failJob(ref, failure);
  }
  releaseJob(ref: LeaseRef): Promise<JobRow> {
    return this.workerWrites.releaseJob(ref);
  }
  failJobs(items: FailItem[]): Promise<WriteOutcome[]> {
    return this.workerWrites.failJobs(items);
  }
  releaseJobs(refs: LeaseRef[]): Promise<WriteOutcome[]> {
    return this.workerWrites.releaseJobs(refs);
  }

  upstreamOutputs(ref: LeaseRef, taskIds: string[]): Promise<UpstreamOutput[]> {
    return this.workerWrites.upstreamOutputs(ref, taskIds);
  }

  // ---- WorkerCredentialStore (memory-credentials.ts) ----------------------------------------

  createWorkerCredential(input: { id: string; pool: string; secretHash: string }): Promise<WorkerCredentialRow> {
    return this.credentials.create(input);
  }
  listWorkerCredentials(): Promise<WorkerCredentialRow[]> {
    return this.credentials.list();
  }
  revokeWorkerCredential(input: { id: string }): Promise<WorkerCredentialRow> {
    return this.credentials.revoke(input);
  }
  findWorkerCredential(input: { secretHash: string }): Promise<WorkerCredentialRow | null> {
    return this.credentials.find(input);
  }

  // ---- EventStore and NoticeStore ---------------------------------------------------------------

  async appendEvents(events: NewEvent[]): Promise<void> {
    if (events.length > 0) this.tables.eventLog.append(events, date(this.nowMs()));
  }

  /** For the tests only (EventReadStore in @fenceline/core/testing); no role of the Store lists events. */
  async listEvents(query: EventQuery): Promise<EventRow[]> {
    return this.tables.eventLog.list(query);
  }

  async notify(notice: StoreNotice): Promise<void> {
    this.tables.publish(notice);
  }

  async subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>> {
    this.tables.listeners.add(listener);
    return async () => {
      this.tables.listeners.delete(listener);
    };
  }

  // ---- PeopleStore (memory-people.ts) and AuditStore (memory-audit.ts) ---------------------

  createUser(input: { name: UserName; role: Role; passwordHash: string }): Promise<UserRow> {
    return this.people.createUser(input);
  }
  userCredentials(input: { name: UserName }): Promise<UserCredentials | null> {
    return this.people.userCredentials(input);
  }
  getUser(input: { userId: UserId }): Promise<UserRow> {
    return this.people.getUser(input);
  }
  listUsers(): Promise<UserRow[]> {
    return this.people.listUsers();
  }
  updateUser(input: { userId: UserId; role?: Role; disabled?: boolean }): Promise<UserRow> {
    return this.people.updateUser(input);
  }
  setPassword(input: { userId: UserId; passwordHash: string }): Promise<UserRow> {
    return this.people.setPassword(input);
  }
  createSession(input: { secretHash: string; userId: UserId; ttlMs: number }): Promise<{ expiresAt: Date }> {
    return this.people.createSession(input);
  }
  sessionPrincipal(input: { secretHash: string }): Promise<Principal | null> {
    return this.people.sessionPrincipal(input);
  }
  deleteSession(input: { secretHash: string }): Promise<void> {
    return this.people.deleteSession(input);
  }
  revokeSessions(input: { userId: UserId }): Promise<{ revoked: number }> {
    return this.people.revokeSessions(input);
  }
  createApiToken(input: { userId: UserId; name: string; role: Role; secretHash: string; ttlMs: number }): Promise<ApiTokenRow> {
    return this.people.createApiToken(input);
  }
  apiTokenPrincipal(input: { secretHash: string }): Promise<Principal | null> {
    return this.people.apiTokenPrincipal(input);
  }
  listApiTokens(input: { userId?: UserId }): Promise<ApiTokenRow[]> {
    return this.people.listApiTokens(input);
  }
  revokeApiToken(input: { tokenId: ApiTokenId }): Promise<ApiTokenRow> {
    return this.people.revokeApiToken(input);
  }
  appendAudit(entry: NewAuditEntry): Promise<AuditRow> {
    return this.audit.appendAudit(entry);
  }
  listAudit(query: AuditQuery): Promise<AuditRow[]> {
    return this.audit.listAudit(query);
  }

  async close(): Promise<void> {
    this.tables.listeners.clear();
  }
}
