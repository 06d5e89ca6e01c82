import { sql } from 'drizzle-orm';
import { fairShare } from './fair-share';
import { date, dateOrNull, num, query, strOrNull, type ConsoleDb } from './sql';

export interface ShardHealth {
  shard: number;
  holder: string | null;
  epoch: number;
  expiresAt: Date | null;
  /** A live, held lease: someone ticks this shard and grants its leases. */
  led: boolean;
}

export interface Overview {
  now: Date;
  jobsRunning: number;
  jobsReady: number;
  jobsWaitingOnCap: number;
  startedLastHour: number;
  failedLastHour: number;
  succeededLastHour: number;
  fencedWritesLastHour: number;
  liveWorkers: number;
  poolSlots: number;
  /** Leased jobs over pool slots, 0..1 (can pass 1 for a moment while workers leave the pool). */
  utilisation: number;
  shardCount: number;
  shards: ShardHealth[];
  /** Jobs ended per minute over the last 30 minutes, oldest first. */
  throughput: { at: Date; succeeded: number; failed: number }[];
  runsActive: number;
  dagCountEstimate: number;
}

const HOUR = sql`now() - interval '1 hour'`;

/** Everything the overview shows, from a handful of indexed reads. */
export async function overview(db: ConsoleDb, opts: { capFraction: number; liveWindowMs: number }): Promise<Overview> {
  const share = await fairShare(db, { ...opts, limit: 10_000 });
  const shards = Array.from({ length: Math.max(share.shardCount, 1) }, (_, i) => i);
  const [counts] = await query(
    db,
    sql`select
          (select count(*) from runs r join jobs j on j.run_id = r.id
             where r.shard = any(${sql.param(shards)}::int[]) and r.state = 'running' and j.state = 'ready') as ready,
          (select count(*) from runs where shard = any(${sql.param(shards)}::int[]) and state in ('queued', 'running')) as runs_active,
          (select count(*) from events where type = 'lease:granted' and at > ${HOUR}) as started,
          (select count(*) from events where type = 'job:failed' and at > ${HOUR}) as failed,
          (select count(*) from events where type = 'job:succeeded' and at > ${HOUR}) as succeeded,
          (select count(*) from events where type = 'write:fenced' and at > ${HOUR}) as fenced,
          (select greatest(reltuples, 0)::bigint from pg_class where oid = 'dags'::regclass) as dag_estimate,
          (select count(*) from (select 1 from dags limit 20000) small) as dag_small_count`,
  );
  const leases = await query(db, sql`select shard, holder, epoch, expires_at, expires_at > now() and holder is not null as live from shard_leases order by shard`);
  const byShard = new Map(leases.map((r) => [num(r.shard), r]));
  const throughputRows = await query(
    db,
    sql`select date_trunc('minute', at) as minute,
          count(*) filter (where type = 'job:succeeded') as succeeded,
          count(*) filter (where type = 'job:failed') as failed
        from events
        where type in ('job:succeeded', 'job:failed') and at > date_trunc('minute', now()) - interval '29 minutes'
        group by 1 order by 1`,
  );
  const perMinute = new Map(throughputRows.map((r) => [date(r.minute).getTime(), r]));
  const nowMinute = Math.floor(share.now.getTime() / 60_000) * 60_000;
  const throughput = Array.from({ length: 30 }, (_, i) => {
    const at = nowMinute - (29 - i) * 60_000;
    const r = perMinute.get(at);
    return { at: new Date(at), succeeded: num(r?.succeeded), failed: num(r?.failed) };
  });
  const smallCount = num(counts?.dag_small_count);
  return {
    now: share.now,
    jobsRunning: share.leasedJobs,
    jobsReady: num(counts?.ready),
    jobsWaitingOnCap: share.dags.reduce((s, d) => s + d.waitingOnCap, 0),
    startedLastHour: num(counts?.started),
    failedLastHour: num(counts?.failed),
    succeededLastHour: num(counts?.succeeded),
    fencedWritesLastHour: num(counts?.fenced),
    liveWorkers: share.liveWorkers,
    poolSlots: share.poolSlots,
    utilisation: share.poolSlots > 0 ? share.leasedJobs / share.poolSlots : 0,
    shardCount: share.shardCount,
    shards: shards.map((shard) => {
      const r = byShard.get(shard);
      return {
        shard,
        holder: r?.live === true ? strOrNull(r.holder) : null,
        epoch: num(r?.epoch),
        expiresAt: dateOrNull(r?.expires_at),
        led: r?.live === true,
      };
    }),
    throughput,
    runsActive: num(counts?.runs_active),
    // Counting 100,000 rows on every poll is wasted work; below 20,000 the count is exact.
    dagCountEstimate: smallCount < 20_000 ? smallCount : num(counts?.dag_estimate),
  };
}
