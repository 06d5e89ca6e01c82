import type {
  AuditStore,
  CatalogueStore,
  ClusterStore,
  EventStore,
  LeaderStore,
  NoticeStore,
  NotificationLeaderStore,
  NotificationStore,
  PeopleStore,
  ResourceLimitStore,
  RunActionStore,
  RunReadStore,
  StoreTime,
  WorkerCredentialStore,
  WorkerProtocolStore,
} from '@fenceline/core/store';
import type { Db } from './db';
import type { OverPool } from './on-pool';
import * as auditLog from './audit-log';
import * as backfills from './backfills';
import * as credentials from './credentials';
import * as dags from './dags';
import * as events from './events';
import * as jobWrites from './job-writes';
import * as jobs from './jobs';
import * as leases from './leases';
import { checkLineage } from './lineage';
import * as notices from './notices';
import * as notificationWatch from './notification-watch';
import * as notifications from './notifications';
import * as people from './people';
import * as resources from './resources';
import * as runActions from './run-actions';
import { pageRuns } from './run-pages';
import * as runs from './runs';
import * as shards from './shards';
import * as tick from './tick';
import * as upstream from './upstream';
import * as workers from './workers';

/*
 * The Store on PostgreSQL, one object per role: which function of the concern files does
 * each operation, over the pool it is given. sql-store.ts puts them on one pool. Each
 * function is one statement or one short transaction with all time taken from the store's
 * clock.
 */

export const sqlStoreTime = { now: tick.now } satisfies OverPool<StoreTime>;

export const sqlClusterStore = {
  ...sqlStoreTime,
  initCluster: shards.initCluster,
  acquireShard: shards.acquireShard,
  renewShard: shards.renewShard,
  releaseShard: shards.releaseShard,
  listShards: shards.listShards,
  // Every node reads the shards this way a few times a minute; it is also where a new
  // timeline (a promoted standby) is noticed and fenced before any shard is taken.
  contentionView: async (db: Db, ask) => {
    await checkLineage(db);
    return shards.contentionView(db, ask);
  },
  leaveCluster: shards.leaveCluster,
  listWorkers: workers.listWorkers,
} satisfies OverPool<ClusterStore>;

export const sqlCatalogueStore = {
  ...sqlStoreTime,
  putDag: dags.putDag,
  getDag: dags.getDag,
  listDagVersions: dags.listDagVersions,
  listDags: dags.listDags,
  setPaused: dags.setPaused,
  triggerRun: runs.triggerRun,
  createBackfill: backfills.createBackfill,
  getBackfill: backfills.getBackfill,
  listBackfills: backfills.listBackfills,
  cancelBackfill: backfills.cancelBackfill,
} satisfies OverPool<CatalogueStore>;

export const sqlRunActionStore = {
  ...sqlStoreTime,
  requestRunAction: runActions.requestRunAction,
  getRunAction: runActions.getRunAction,
  listRunActions: runActions.listRunActions,
} satisfies OverPool<RunActionStore>;

export const sqlRunReadStore = {
  ...sqlStoreTime,
  getRun: runs.getRun,
  listRuns: runs.listRuns,
  pageRuns,
  listJobs: jobs.listJobs,
  getJob: jobs.getJob,
  getResult: jobs.getResult,
  listRunResults: jobs.listRunResults,
  listAttempts: jobs.listAttempts,
  listLogChunks: jobs.listLogChunks,
  listLeasedJobs: jobs.listLeasedJobs,
} satisfies OverPool<RunReadStore>;

export const sqlLeaderStore = {
  ...sqlStoreTime,
  dueDags: tick.dueDags,
  loadShard: tick.loadShard,
  queuedRuns: runs.queuedRuns,
  getDagVersions: dags.getDagVersions,
  getJobs: jobs.getJobs,
  grantLeasesMany: leases.grantLeasesMany,
  pendingRunActions: runActions.pendingRunActions,
  readRun: runActions.readRun,
  applyRunAction: runActions.applyRunAction,
  sweepExpired: leases.sweepExpired,
  openBackfills: backfills.openBackfills,
  advanceBackfill: backfills.advanceBackfill,
  settleBackfill: backfills.settleBackfill,
  createScheduledRunsAcross: runs.createScheduledRunsAcross,
  startRunsAcross: runs.startRunsAcross,
  promoteJobsAcross: jobs.promoteJobsAcross,
  markUpstreamFailedAcross: jobs.markUpstreamFailedAcross,
  markSkippedAcross: jobs.markSkippedAcross,
  finishRunsAcross: runs.finishRunsAcross,
} satisfies OverPool<LeaderStore>;

export const sqlWorkerProtocolStore = {
  ...sqlStoreTime,
  registerWorker: workers.registerWorker,
  workerSession: workers.workerSession,
  heartbeatWorkers: workers.heartbeatWorkers,
  renewLeases: leases.renewLeases,
  completeJobs: jobWrites.completeJobs,
  failJob: jobWrites.failJob,
  failJobs: jobWrites.failJobs,
  releaseJob: jobWrites.releaseJob,
  releaseJobs: jobWrites.releaseJobs,
  upstreamOutputs: upstream.upstreamOutputs,
} satisfies OverPool<WorkerProtocolStore>;

export const sqlWorkerCredentialStore = {
  createWorkerCredential: credentials.createWorkerCredential,
  listWorkerCredentials: credentials.listWorkerCredentials,
  revokeWorkerCredential: credentials.revokeWorkerCredential,
  findWorkerCredential: credentials.findWorkerCredential,
} satisfies OverPool<WorkerCredentialStore>;

export const sqlEventStore = {
  ...sqlStoreTime,
  appendEvents: events.appendEvents,
} satisfies OverPool<EventStore>;

/** Publishing only: a subscription outlives a pool, so the store's connection (sql-connection.ts) keeps it. */
export const sqlNoticeWrites = { notify: notices.notify } satisfies OverPool<Pick<NoticeStore, 'notify'>>;

export const sqlPeopleStore = {
  ...sqlStoreTime,
  createUser: people.createUser,
  userCredentials: people.userCredentials,
  getUser: people.getUser,
  listUsers: people.listUsers,
  updateUser: people.updateUser,
  setPassword: people.setPassword,
  createSession: people.createSession,
  sessionPrincipal: people.sessionPrincipal,
  deleteSession: people.deleteSession,
  revokeSessions: people.revokeSessions,
  createApiToken: people.createApiToken,
  apiTokenPrincipal: people.apiTokenPrincipal,
  listApiTokens: people.listApiTokens,
  revokeApiToken: people.revokeApiToken,
} satisfies OverPool<PeopleStore>;

export const sqlAuditStore = {
  ...sqlStoreTime,
  appendAudit: auditLog.appendAudit,
  listAudit: auditLog.listAudit,
} satisfies OverPool<AuditStore>;

export const sqlResourceLimitStore = {
  setResourceLimit: resources.setResourceLimit,
  deleteResourceLimit: resources.deleteResourceLimit,
  listResourceLimits: resources.listResourceLimits,
  resourceUse: resources.resourceUse,
} satisfies OverPool<ResourceLimitStore>;

export const sqlNotificationStore = {
  createNotificationChannel: notifications.createNotificationChannel,
  listNotificationChannels: notifications.listNotificationChannels,
  deleteNotificationChannel: notifications.deleteNotificationChannel,
  createNotificationRule: notifications.createNotificationRule,
  listNotificationRules: notifications.listNotificationRules,
  deleteNotificationRule: notifications.deleteNotificationRule,
  listNotifications: notifications.listNotifications,
  retryNotification: notifications.retryNotification,
} satisfies OverPool<NotificationStore>;

export const sqlNotificationLeaderStore = {
  enqueueNotifications: notifications.enqueueNotifications,
  dueNotifications: notifications.dueNotifications,
  recordDelivery: notifications.recordDelivery,
  catchUpNotifications: notifications.catchUpNotifications,
  notificationWatch: notificationWatch.notificationWatch,
  enqueueMissedDeadlines: notificationWatch.enqueueMissedDeadlines,
  enqueueClusterNotifications: notificationWatch.enqueueClusterNotifications,
  previousRunEnds: notifications.previousRunEnds,
} satisfies OverPool<NotificationLeaderStore>;

/** What the SQL store offers beyond the Store: tools' and tests' own operations. */
export const sqlStoreExtras = {
  /**
   * Several specs, all or none, in one transaction (what `fenceline apply` with many files
   * needs). Not on the Store interface: nothing on the scheduling path stores DAGs.
   */
  putDags: dags.putDags,
  /** For the tests only (EventReadStore in @fenceline/core/testing); no role of the Store lists events. */
  listEvents: events.listEvents,
};
