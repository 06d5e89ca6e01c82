import type { AuditStore, CatalogueStore, NotificationStore, PeopleStore, ResourceLimitStore, RunActionStore, RunReadStore } from '@fenceline/core/store';
import { openStore, type SqlStore } from '@fenceline/db';
import { poolSnapshot } from '@fenceline/db/console';
import { consoleConfig } from './config';

/**
 * What the console's procedures may use: the catalogue (its writes are validated and
 * notified as the CLI's are), operator actions on runs, the run reads, users, sessions and tokens, the audit log,
 * resource limits (set and deleted by operators), notification channels, rules and retries, and the handle its console queries read through.
 * No Store method of the scheduling path (leader or worker writes) is in reach: in particular not dueNotifications, the one read that
 * carries a channel's whole URL and secret.
 */
export type ConsoleStore = CatalogueStore &
  RunActionStore &
  RunReadStore &
  PeopleStore &
  AuditStore &
  NotificationStore &
  Pick<ResourceLimitStore, 'setResourceLimit' | 'deleteResourceLimit' | 'listResourceLimits'> &
  Pick<SqlStore, 'db'>;

/**
 * One store (connection pool) per console process. It lives on globalThis so that module
 * re-evaluation in development does not open a new pool on every edit.
 */
const holder = globalThis as unknown as { fencelineConsoleStore?: Promise<SqlStore> };

export function consoleStore(): Promise<SqlStore> {
  holder.fencelineConsoleStore ??= openStore({
    databaseUrl: consoleConfig().databaseUrl,
    applicationName: 'fenceline-console',
    max: 8,
  }).catch((err: unknown) => {
    holder.fencelineConsoleStore = undefined;
    throw err;
  });
  return holder.fencelineConsoleStore;
}

/**
 * The cluster's recorded shard count (fixed when the cluster first started), which a new
 * DAG must hash into. Before any scheduler recorded one, FENCELINE_SHARDS is what they will
 * record, so the console reads rather than fixes it.
 */
export async function clusterShardCount(): Promise<number> {
  const recorded = (await poolSnapshot((await consoleStore()).db, 60_000)).shardCount;
  return recorded > 0 ? recorded : consoleConfig().shardCount;
}
