import { sql } from 'drizzle-orm';
import { workerMetaProblem, type WorkerRow } from '@fenceline/core';
import { array, firstRow, jsonb, msInterval, rows, type Executor } from './db';
import { workerFromRow } from './rows';

/**
 * Registers or re-registers a worker under a session, which becomes its current one (a
 * re-registration is a restart, so started_at moves; the same session registering with
 * another node leaves it as it is).
 */
export async function registerWorker(
  db: Executor,
  worker: { id: string; slots: number; nodeId: string | null; meta?: Record<string, unknown>; session: string; credentialId: string | null },
): Promise<WorkerRow> {
  const problem = workerMetaProblem(worker.meta);
  if (problem !== null) throw problem;
  const row = await firstRow(
    db,
    sql`insert into workers (id, slots, node_id, meta, started_at, last_seen, session, credential_id)
        values (${worker.id}, ${worker.slots}, ${worker.nodeId}, ${jsonb(worker.meta ?? {})}, now(), now(), ${worker.session}, ${worker.credentialId})
        on conflict (id) do update set slots = excluded.slots, node_id = excluded.node_id, meta = excluded.meta,
          started_at = case when workers.session is distinct from excluded.session then excluded.started_at else workers.started_at end,
          last_seen = excluded.last_seen, session = excluded.session, credential_id = excluded.credential_id
        returning *`,
  );
  if (!row) throw new Error(`registering worker ${worker.id} returned no row`);
  return workerFromRow(row);
}

/**
 * One statement for a whole batch of heartbeats. The rows are locked in id order first,
 * so two nodes heartbeating overlapping sets (a worker mid-reconnect) cannot deadlock.
 * A null nodeId leaves the recorded node as it is. Rows seen within `skipSeenWithinMs` are
 * neither locked nor written; a row another node refreshes while this one waits for its
 * lock is re-checked under the lock and skipped too.
 */
export async function heartbeatWorkers(db: Executor, workerIds: string[], nodeId: string | null, skipSeenWithinMs = 0): Promise<void> {
  if (workerIds.length === 0) return;
  const stale = skipSeenWithinMs > 0 ? sql`and last_seen < now() - ${msInterval(skipSeenWithinMs)}` : sql``;
  await rows(
    db,
    sql`with locked as materialized (
          select id from workers where id = any(${array(workerIds, 'text')}) ${stale} order by id for update
        )
        update workers w set last_seen = now(), node_id = coalesce(${nodeId}::text, w.node_id)
        from locked where w.id = locked.id`,
  );
}

/** Workers seen within `withinMs` of store time (by the index on last_seen). */
export async function listWorkers(db: Executor, withinMs: number): Promise<WorkerRow[]> {
  const result = await rows(db, sql`select * from workers where last_seen >= now() - ${msInterval(withinMs)} order by id`);
  return result.map(workerFromRow);
}

/** The worker's current session key, or null when it never registered. */
export async function workerSession(db: Executor, workerId: string): Promise<string | null> {
  const row = await firstRow(db, sql`select session from workers where id = ${workerId}`);
  return (row?.session as string | null | undefined) ?? null;
}
