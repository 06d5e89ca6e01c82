import { sql } from 'drizzle-orm';
import { date, num, query, type ConsoleDb } from './sql';

/** The worker pool the fair-share cap is a fraction of: slots of workers seen within the live window. */
export interface PoolSnapshot {
  now: Date;
  liveWorkers: number;
  poolSlots: number;
  leasedJobs: number;
  shardCount: number;
}

export async function poolSnapshot(db: ConsoleDb, liveWindowMs: number): Promise<PoolSnapshot> {
  const [row] = await query(
    db,
    sql`select now() as now,
          (select count(*) from workers where last_seen >= now() - ${liveWindowMs}::float8 * interval '1 millisecond') as live_workers,
          (select coalesce(sum(slots), 0) from workers where last_seen >= now() - ${liveWindowMs}::float8 * interval '1 millisecond') as pool_slots,
          (select count(*) from jobs where state = 'leased') as leased_jobs,
          (select shard_count from cluster_config where id = 1) as shard_count`,
  );
  return {
    now: date(row?.now),
    liveWorkers: num(row?.live_workers),
    poolSlots: num(row?.pool_slots),
    leasedJobs: num(row?.leased_jobs),
    shardCount: num(row?.shard_count),
  };
}

/**
 * The most leases one DAG may hold: floor(capFraction x pool), at least one while the pool
 * has any slot. It mirrors capFor in @fenceline/core's fair-share planner (the epsilon keeps
 * 0.29 x 100 from rounding down to 28), so the console shows the number the leader enforces.
 */
export function capOf(poolSlots: number, capFraction: number): number {
  if (!(poolSlots > 0)) return 0;
  return Math.max(1, Math.floor(capFraction * poolSlots + 1e-9));
}
