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
import { MemoryAudit } from './memory-audit';
import { MemoryBackfills } from './memory-backfills';
import { MemoryCatalogue } from './memory-catalogue';
import { MemoryCluster } from './memory-cluster';
import { MemoryCredentials } from './memory-credentials';
import { MemoryLeader } from './memory-leader';
import { MemoryLeases } from './memory-leases';
import { MemoryNotifications } from './memory-notifications';
import { MemoryPeople } from './memory-people';
import { MemoryReads } from './memory-reads';
import { MemoryResources } from './memory-resources';
import { date } from './memory-rows';
import { MemoryRunActions } from './memory-run-actions';
import type { MemoryTables } from './memory-tables';
import { MemoryWorkerWrites } from './memory-worker-writes';

/** The memory store, one object per role of the Store, each made from the parts that do its work. */
export interface MemoryRoles {
  cluster: ClusterStore;
  catalogue: CatalogueStore;
  runActions: RunActionStore;
  runReads: RunReadStore;
  leader: LeaderStore;
  workerProtocol: WorkerProtocolStore;
  workerCredentials: WorkerCredentialStore;
  events: EventStore;
  notices: NoticeStore;
  people: PeopleStore;
  audit: AuditStore;
  resourceLimits: ResourceLimitStore;
  notifications: NotificationStore;
  notificationLeader: NotificationLeaderStore;
}

/**
 * The named methods of a part, each bound to it: a role takes its operations from its
 * parts as they are, so each call settles exactly as the part's own promise does.
 */
function methodsOf<P extends object, K extends keyof P>(part: P, names: readonly K[]): Pick<P, K> {
  const out = {} as Pick<P, K>;
  for (const name of names) out[name] = (part[name] as (...args: unknown[]) => unknown).bind(part) as P[K];
  return out;
}

/**
 * Builds the parts over the shared tables (memory-tables.ts) and each role from them: the
 * cluster, the catalogue, the reads, the leader's writes, the leases and the worker writes
 * each keep to one concern, and a role that spans several (the leader's) takes a method
 * from each.
 */
export function memoryRoles(tables: MemoryTables): MemoryRoles {
  const clock: StoreTime = { now: async () => date(tables.nowMs()) };
  const cluster = new MemoryCluster(tables);
  const catalogue = new MemoryCatalogue(tables);
  const reads = new MemoryReads(tables);
  const leader = new MemoryLeader(tables);
  const resources = new MemoryResources(tables);
  const leases = new MemoryLeases(tables, resources);
  const workerWrites = new MemoryWorkerWrites(tables);
  const people = new MemoryPeople(tables.nowMs);
  const audit = new MemoryAudit(tables.nowMs);
  const credentials = new MemoryCredentials(tables);
  const actions = new MemoryRunActions(tables);
  const backfills = new MemoryBackfills(tables, actions);
  const notifications = new MemoryNotifications(tables);

  return {
    cluster: {
      ...clock,
      ...methodsOf(cluster, ['initCluster', 'acquireShard', 'renewShard', 'releaseShard', 'contentionView', 'leaveCluster', 'listShards', 'listWorkers']),
    },
    catalogue: {
      ...clock,
      ...methodsOf(catalogue, ['putDag', 'getDag', 'listDagVersions', 'listDags', 'setPaused', 'triggerRun']),
      ...methodsOf(backfills, ['createBackfill', 'getBackfill', 'listBackfills', 'cancelBackfill']),
    },
    runActions: { ...clock, ...methodsOf(actions, ['requestRunAction', 'getRunAction', 'listRunActions']) },
    runReads: {
      ...clock,
      ...methodsOf(reads, ['getRun', 'listRuns', 'pageRuns', 'listJobs', 'getJob', 'getResult', 'listRunResults', 'listAttempts', 'listLogChunks', 'listLeasedJobs']),
    },
    leader: {
      ...clock,
      ...methodsOf(leader, [
        'dueDags',
        'loadShard',
        'queuedRuns',
        'getDagVersions',
        'getJobs',
        'createScheduledRunsAcross',
        'startRunsAcross',
        'promoteJobsAcross',
        'markUpstreamFailedAcross',
        'markSkippedAcross',
        'finishRunsAcross',
      ]),
      ...methodsOf(leases, ['grantLeasesMany', 'sweepExpired']),
      ...methodsOf(actions, ['pendingRunActions', 'readRun', 'applyRunAction']),
      ...methodsOf(backfills, ['openBackfills', 'advanceBackfill', 'settleBackfill']),
    },
    workerProtocol: {
      ...clock,
      ...methodsOf(workerWrites, ['registerWorker', 'heartbeatWorkers', 'renewLeases', 'completeJobs', 'failJob', 'failJobs', 'releaseJob', 'releaseJobs', 'upstreamOutputs']),
      workerSession: async (workerId) => tables.workerTable.session(workerId),
    },
    workerCredentials: methodsOf(credentials, ['createWorkerCredential', 'listWorkerCredentials', 'revokeWorkerCredential', 'findWorkerCredential']),
    events: {
      ...clock,
      appendEvents: async (events, batchKey) => {
        if (events.length > 0) tables.eventLog.append(events, date(tables.nowMs()), batchKey);
      },
    },
    notices: {
      notify: async (notice) => tables.publish(notice),
      subscribe: async (listener) => {
        tables.listeners.add(listener);
        return async () => {
          tables.listeners.delete(listener);
        };
      },
    },
    people: {
      ...clock,
      ...methodsOf(people, [
        'createUser',
        'userCredentials',
        'getUser',
        'listUsers',
        'updateUser',
        'setPassword',
        'createSession',
        'sessionPrincipal',
        'deleteSession',
        'revokeSessions',
        'createApiToken',
        'apiTokenPrincipal',
        'listApiTokens',
        'revokeApiToken',
      ]),
    },
    audit: { ...clock, ...methodsOf(audit, ['appendAudit', 'listAudit']) },
    resourceLimits: methodsOf(resources, ['setResourceLimit', 'deleteResourceLimit', 'listResourceLimits', 'resourceUse']),
    notifications: methodsOf(notifications, [
      'createNotificationChannel',
      'listNotificationChannels',
      'deleteNotificationChannel',
      'createNotificationRule',
      'listNotificationRules',
      'deleteNotificationRule',
      'listNotifications',
      'retryNotification',
    ]),
    notificationLeader: methodsOf(notifications, [
      'enqueueNotifications',
      'dueNotifications',
      'recordDelivery',
      'catchUpNotifications',
      'notificationWatch',
      'enqueueMissedDeadlines',
      'enqueueClusterNotifications',
      'previousRunEnds',
    ]),
  };
}
