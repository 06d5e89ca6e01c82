import { sql } from 'drizzle-orm';
import { firstRow, type Executor, type Db } from './db';
import { toNumber } from './rows';

/**
 * How far a new timeline moves every open job's fence and every shard's epoch. A standby
 * that was behind can lack grants made in its replication lag; no job is granted, and no
 * shard taken over, a million times in that lag, so every number it could re-issue stays
 * below the raised floor.
 */
export const TIMELINE_FENCE_GAP = 1_000_000;

/** The timeline the server writes WAL on now: the first 8 hex digits of the current WAL file's name. */
const CURRENT_TIMELINE = sql`('x' || substr(pg_walfile_name(pg_current_wal_lsn()), 1, 8))::bit(32)::int`;

export interface LineageCheck {
  timeline: number;
  /** True when this call found a new timeline and raised the fences and epochs. */
  fenced: boolean;
}

/**
 * Compares the server's timeline with the one the store last ran on. The first sight of a
 * store records its timeline; a new one (a promoted standby) raises, in one transaction
 * with the new record, the fence of every job not yet ended and the epoch of every shard
 * by TIMELINE_FENCE_GAP. A holder of a fence the old primary granted is then refused like
 * any stale holder, and every leader re-takes its shards under a fresh epoch. Nodes race
 * to do it; the row lock makes one of them do it once.
 */
export async function checkLineage(db: Db): Promise<LineageCheck> {
  const seen = await firstRow(db, sql`select (select timeline from store_lineage where id = 1) as recorded, ${CURRENT_TIMELINE} as current`);
  const current = toNumber(seen?.current);
  if (seen?.recorded === null || seen?.recorded === undefined) {
    await db.execute(sql`insert into store_lineage (id, timeline) values (1, ${current}) on conflict (id) do nothing`);
    return { timeline: current, fenced: false };
  }
  if (toNumber(seen.recorded) === current) return { timeline: current, fenced: false };
  return db.transaction(async (tx) => {
    const row = await firstRow(tx, sql`select timeline from store_lineage where id = 1 for update`);
    if (toNumber(row?.timeline) === current) return { timeline: current, fenced: false };
    await raiseFences(tx);
    await tx.execute(sql`update store_lineage set timeline = ${current}, fencings = fencings + 1, changed_at = now() where id = 1`);
    // Operators see it in the event log beside the leaders' re-elections it causes.
    await tx.execute(
      sql`insert into events (type, data) values ('store:timeline-fenced', ${JSON.stringify({ previousTimeline: toNumber(row?.timeline), timeline: current, gap: TIMELINE_FENCE_GAP })}::jsonb)`,
    );
    return { timeline: current, fenced: true };
  });
}

async function raiseFences(tx: Executor): Promise<void> {
  await tx.execute(sql`update jobs set fence = fence + ${TIMELINE_FENCE_GAP} where state not in ('succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled')`);
  await tx.execute(sql`update shard_leases set epoch = epoch + ${TIMELINE_FENCE_GAP}`);
}
