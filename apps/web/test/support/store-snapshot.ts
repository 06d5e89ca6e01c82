import { parseDagId } from '@fenceline/core';
import type { SqlStore } from '@fenceline/db';

/**
 * Everything a console procedure or an API call could have written, read through the
 * store: the swept DAG's versions, runs and their actions, backfills, limits, notification
 * channels, rules and deliveries, users, API tokens and the audit log. A sweep takes it
 * before and after, and a refused input must leave it unchanged.
 */
export async function storeSnapshot(store: SqlStore, dagId = 'sweep'): Promise<string> {
  const [dags, runs, backfills, limits, channels, rules, notifications, users, tokens, audit] = await Promise.all([
    store.listDagVersions(parseDagId(dagId)),
    store.pageRuns({ limit: 500 }),
    store.listBackfills({ limit: 500 }),
    store.listResourceLimits(),
    store.listNotificationChannels(),
    store.listNotificationRules(),
    store.listNotifications({ limit: 1000 }),
    store.listUsers(),
    store.listApiTokens({}),
    store.listAudit({ limit: 1000 }),
  ]);
  const actions = await Promise.all(runs.rows.map((r) => store.listRunActions(r.id)));
  return JSON.stringify({ dags, runs: runs.rows, backfills, limits, channels, rules, notifications, users, tokens, audit, actions });
}
