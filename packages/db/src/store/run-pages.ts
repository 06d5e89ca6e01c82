import { sql, type SQL } from 'drizzle-orm';
import { assembleRunPage, checkRunFilters, decodeRunCursor, runPageLimit } from '@fenceline/core';
import { type RunPage, type RunPageQuery } from '@fenceline/core/store';
import { rows, type Executor } from './db';
import { runFromRow, toRunId } from './rows';

/**
 * Keyset pages of runs (RunReadStore.pageRuns). Every page is one range scan of an index
 * in (scheduled_at, id) order: runs_scheduled_at_id_idx for all runs,
 * runs_state_scheduled_at_idx with a state, runs_dag_scheduled_at_key with a DAG. The key
 * of the first and last run goes back as text to the microsecond, since a JavaScript date
 * keeps milliseconds and a key rounded down would repeat or skip a run at the page's edge.
 */
const PAGE_COLUMNS = sql`id, dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at,
  to_char(scheduled_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as scheduled_key`;

function filters(query: RunPageQuery): SQL[] {
  const conditions: SQL[] = [];
  if (query.dagId !== undefined) conditions.push(sql`dag_id = ${query.dagId}`);
  if (query.state !== undefined) conditions.push(sql`state = ${query.state}`);
  if (query.trigger !== undefined) conditions.push(sql`trigger = ${query.trigger}`);
  if (query.scheduledFrom !== undefined) conditions.push(sql`scheduled_at >= ${query.scheduledFrom.toISOString()}::timestamptz`);
  if (query.scheduledBefore !== undefined) conditions.push(sql`scheduled_at < ${query.scheduledBefore.toISOString()}::timestamptz`);
  return conditions;
}

export async function pageRuns(db: Executor, query: RunPageQuery): Promise<RunPage> {
  checkRunFilters(query);
  const limit = runPageLimit(query);
  const order = query.order ?? 'newest';
  const cursor = query.cursor === undefined ? null : decodeRunCursor(query.cursor, order);
  // Reading 'before' a key walks the order backwards from it: newest first read oldest first.
  const descending = (order === 'newest') !== (cursor?.way === 'before');
  const conditions = filters(query);
  if (cursor) {
    const at = sql`${cursor.key.scheduledAt}::timestamptz`;
    const id = sql`${cursor.key.id}::bigint`;
    conditions.push(descending ? sql`(scheduled_at, id) < (${at}, ${id})` : sql`(scheduled_at, id) > (${at}, ${id})`);
  }
  const where = conditions.length > 0 ? sql`where ${sql.join(conditions, sql` and `)}` : sql``;
  const direction = descending ? sql`desc` : sql`asc`;
  const result = await rows(db, sql`select ${PAGE_COLUMNS} from runs ${where} order by scheduled_at ${direction}, id ${direction} limit ${limit + 1}`);
  return assembleRunPage({
    order,
    cursor,
    limit,
    fetched: result.map((r) => ({ row: runFromRow(r), key: { scheduledAt: String(r.scheduled_key), id: toRunId(r.id) } })),
  });
}
