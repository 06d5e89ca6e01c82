import { sql } from 'drizzle-orm';
import { workerMetaProblem, type WorkerRow } from '@fenceline/core';
import { type WorkerBeat } from '@fenceline/core/store';
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
 * One statement for a whole batch of heartbeats. Each row's last_seen becomes the time the
 * node last heard from the worker (now() less its silence there) and never moves back, so
 * several nodes vouching for one worker leave the latest of their times. The rows are
 * locked in id order first, so two nodes heartbeating overlapping sets (a worker
 * mid-reconnect) cannot deadlock. A null nodeId leaves the recorded node as it is. A worker
 * still polling (silent 0) whose row was seen within `skipSeenWithinMs` is neither locked nor
 * written, and neither is a row the beat would not move forward; a row another node
 * refreshes while this one waits for its lock is re-checked under the lock and skipped too.
 */
export async function heartbeatWorkers(db: Executor, beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs = 0): Promise<void> {
  if (beats.length === 0) return;
  const skip = msInterval(Math.max(0, Math.floor(skipSeenWithinMs)));
  await rows(
    db,
    sql`with b as (
          select id, max(now() - silent_ms * interval '1 millisecond') as seen, bool_or(silent_ms <= 0) as polling
          from unnest(${array(
            beats.map((b) => b.workerId),
            'text',
          )}, ${array(
            beats.map((b) => Math.min(2_147_483_647, Math.max(0, Math.round(b.silentMs)))),
            'int',
          )}) as b(id, silent_ms)
          group by id
        ),
        locked as materialized (
          select w.id, b.seen from workers w join b on b.id = w.id
          where w.last_seen < b.seen and (not b.polling or w.last_seen < b.seen - ${skip})
          order by w.id for update of w
        )
        update workers w set last_seen = greatest(w.last_seen, locked.seen), node_id = coalesce(${nodeId}::text, w.node_id)
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
