import { clusterConfig, schedulerNodes, shardLeases } from './shards';
import { dagRequestKeys, dags, dagVersions } from './dags';
import { jobs, runs } from './runs';
import { results } from './results';
import { workerCredentials, workers } from './workers';
import { eventBatches, events } from './events';
import { storeLineage } from './lineage';
import { apiTokens, sessions, users } from './people';
import { auditLog } from './audit';
import { runActions } from './actions';
import { backfills } from './backfills';
import { resourceHolds, resourceLimits } from './resources';
import { notificationChannels, notificationRules, notifications } from './notifications';

export {
  clusterConfig,
  schedulerNodes,
  shardLeases,
  dags,
  dagVersions,
  dagRequestKeys,
  jobs,
  runs,
  results,
  workers,
  workerCredentials,
  events,
  eventBatches,
  storeLineage,
  users,
  sessions,
  apiTokens,
  auditLog,
  runActions,
  backfills,
  resourceLimits,
  resourceHolds,
  notificationChannels,
  notificationRules,
  notifications,
};

/** Every table, for drizzle(client, { schema }) and drizzle-kit. */
export const schema = {
  clusterConfig,
  schedulerNodes,
  shardLeases,
  dags,
  dagVersions,
  dagRequestKeys,
  runs,
  jobs,
  results,
  workers,
  workerCredentials,
  events,
  eventBatches,
  storeLineage,
  users,
  sessions,
  apiTokens,
  auditLog,
  runActions,
  backfills,
  resourceLimits,
  resourceHolds,
  notificationChannels,
  notificationRules,
  notifications,
};
