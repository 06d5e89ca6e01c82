import { sql } from 'drizzle-orm';
import type { EventRow } from '@fenceline/core';
import type { NewEvent } from '@fenceline/core/store';
import { rows, type Executor } from './db';
import { eventFromRow, isId } from './rows';

/**
 * Appends many events in one multi-row insert, each stamped with the time it carries (when
 * it happened, by its emitter's estimate of this store's clock); an event without one gets
 * the store's clock. The batch travels as one json (not jsonb) parameter: json_to_recordset reads it without
 * first building a jsonb tree of the whole batch, which made binding a 5,000-event batch
 * about a third slower; only each event's `data` becomes jsonb. A batch sent with a key is
 * kept once however often it is sent: the key's row and the events go in one statement,
 * and a key already on record inserts neither.
 */
export async function appendEvents(db: Executor, events: NewEvent[], batchKey?: string): Promise<void> {
  if (events.length === 0) return;
  const payload = JSON.stringify(
    events.map((e) => ({
      type: e.type,
      at: e.at?.toISOString() ?? null,
      shard: e.shard ?? null,
      dag_id: e.dagId ?? null,
      run_id: e.runId != null && isId(e.runId) ? e.runId : null,
      job_id: e.jobId != null && isId(e.jobId) ? e.jobId : null,
      worker_id: e.workerId ?? null,
      node_id: e.nodeId ?? null,
      fence: e.fence ?? null,
      epoch: e.epoch ?? null,
      data: e.data ?? {},
    })),
  );
  const firstTime = batchKey === undefined ? sql`` : sql`with batch as (insert into event_batches (key) values (${batchKey}) on conflict (key) do nothing returning key) `;
  await rows(
    db,
    sql`${firstTime}insert into events (at, type, shard, dag_id, run_id, job_id, worker_id, node_id, fence, epoch, data)
        select coalesce(at, now()), type, shard, dag_id, run_id, job_id, worker_id, node_id, fence, epoch, coalesce(data::jsonb, '{}'::jsonb)
        from json_to_recordset(${payload}::json) as e(at timestamptz, type text, shard int, dag_id text, run_id bigint, job_id bigint,
          worker_id text, node_id text, fence bigint, epoch bigint, data json)
        ${batchKey === undefined ? sql`` : sql`where exists (select 1 from batch)`}`,
  );
}

/**
 * Events in id order. With `afterId` it tails the log forward from that id; without it,
 * it returns the latest `limit` events (still in id order, so the last id can be tailed).
 */
export async function listEvents(db: Executor, query: { afterId?: string; runId?: string; jobId?: string; type?: string; limit?: number }): Promise<EventRow[]> {
  const limit = Math.min(Math.max(query.limit ?? 100, 1), 10_000);
  const conditions = [sql`true`];
  if (query.runId !== undefined) conditions.push(isId(query.runId) ? sql`run_id = ${query.runId}` : sql`false`);
  if (query.jobId !== undefined) conditions.push(isId(query.jobId) ? sql`job_id = ${query.jobId}` : sql`false`);
  if (query.type !== undefined) conditions.push(sql`type = ${query.type}`);
  const where = sql.join(conditions, sql` and `);
  const result =
    query.afterId !== undefined && isId(query.afterId)
      ? await rows(db, sql`select * from events where ${where} and id > ${query.afterId} order by id limit ${limit}`)
      : await rows(db, sql`select * from (select * from events where ${where} order by id desc limit ${limit}) e order by id`);
  return result.map(eventFromRow);
}
