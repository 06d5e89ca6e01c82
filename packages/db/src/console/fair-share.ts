import { sql } from 'drizzle-orm';
import { DEFAULT_POOL, reserveOf, type LendReserve } from '@fenceline/core';
import { capOf, poolSnapshot, type PoolSnapshot } from './pool';
import { liveOffers } from './routing';
import { num, numOrNull, query, type ConsoleDb } from './sql';

export interface DagShare {
  dagId: string;
  /** The worker pool these jobs run in: the cap is a fraction of this pool's live slots, per DAG and pool. */
  pool: string;
  /** Leases the DAG holds now in this pool, across its running runs. */
  held: number;
  /** Of those, the ones beyond its cap: borrowed from idle slots the pool lends (scheduler lending on). */
  lent: number;
  /** The DAG's own cap fraction when its spec sets one, else the cluster's. */
  capFraction: number;
  capOverridden: boolean;
  cap: number;
  /** Live slots of this pool, what the cap is a fraction of. */
  poolSlots: number;
  /** Ready jobs whose backoff has passed. */
  ready: number;
  /** Of those, the ones that wait only because the DAG is at its cap. */
  waitingOnCap: number;
  /** Ready jobs still inside a retry backoff. */
  inBackoff: number;
  /** Jobs whose dependencies have not all succeeded yet. */
  waitingOnDeps: number;
}

/** One pool's live slots and the cap a DAG without its own capFraction gets in it. */
export interface PoolShare {
  pool: string;
  liveWorkers: number;
  slots: number;
  cap: number;
  /** The slots lending keeps free for newly ready jobs (the reserve, never lent); null without lending. */
  reserve: number | null;
  /** Leases held beyond their DAG's cap in this pool now, summed over its DAGs. */
  lent: number;
}

export interface FairShareSnapshot extends PoolSnapshot {
  capFraction: number;
  /** The schedulers' lending rule as the console is told it; null: the cap is strict. */
  lendReserve: LendReserve | null;
  /** The cap a DAG without its own capFraction gets in the default pool. */
  cap: number;
  /** Every pool with a live worker or work in flight, the default pool first. */
  pools: PoolShare[];
  /** One row per DAG and pool with work in flight. */
  dags: DagShare[];
}

/**
 * Per DAG and pool with work in flight: leases held against the cap of that pool, those lent
 * beyond it, and why its ready jobs wait. Only jobs of running runs are read, found through
 * the runs' state index, so the cost follows the work in flight and not the size of the job
 * history. A job's pool is its task's in the run's version of the spec; the tasks that name
 * a pool are few, so they are read once per running version and joined by hash.
 */
export async function fairShare(db: ConsoleDb, opts: { capFraction: number; liveWindowMs: number; lendReserve?: LendReserve | null; limit?: number }): Promise<FairShareSnapshot> {
  const pool = await poolSnapshot(db, opts.liveWindowMs);
  const { pools: livePools } = await liveOffers(db, opts.liveWindowMs);
  const shards = Array.from({ length: Math.max(pool.shardCount, 1) }, (_, i) => i);
  const result = await query(
    db,
    sql`with running as (
          select id, dag_id, dag_version from runs where shard = any(${sql.param(shards)}::int[]) and state = 'running'
        ),
        task_pools as (
          select v.dag_id, v.version, x->>'id' as task_id, x->>'pool' as pool
          from (select distinct dag_id, dag_version from running) rv
          join dag_versions v on v.dag_id = rv.dag_id and v.version = rv.dag_version
          cross join jsonb_array_elements(v.spec->'tasks') as x
          where x ? 'pool'
        )
        select j.dag_id, coalesce(p.pool, ${DEFAULT_POOL}) as pool,
          count(*) filter (where j.state = 'leased') as held,
          count(*) filter (where j.state = 'ready' and (j.next_attempt_at is null or j.next_attempt_at <= now())) as ready,
          count(*) filter (where j.state = 'ready' and j.next_attempt_at > now()) as backoff,
          count(*) filter (where j.state = 'waiting') as waiting,
          (select (v.spec->>'capFraction')::float8 from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version where d.id = j.dag_id) as cap_fraction
        from running r join jobs j on j.run_id = r.id
        left join task_pools p on p.dag_id = r.dag_id and p.version = r.dag_version and p.task_id = j.task_id
        where j.state in ('leased', 'ready', 'waiting')
        group by 1, 2
        order by count(*) filter (where j.state = 'leased') desc, j.dag_id, 2
        limit ${opts.limit ?? 200}`,
  );
  const slotsOf = new Map(livePools.map((p) => [p.pool, p.slots]));
  const lendReserve = opts.lendReserve ?? null;
  const dags = result.map((r): DagShare => {
    const own = numOrNull(r.cap_fraction);
    const capFraction = own ?? opts.capFraction;
    const poolName = String(r.pool);
    const poolSlots = slotsOf.get(poolName) ?? 0;
    const cap = capOf(poolSlots, capFraction);
    const held = num(r.held);
    const ready = num(r.ready);
    return {
      dagId: String(r.dag_id),
      pool: poolName,
      held,
      // A pool with no live slot has no cap to lend beyond; its leases are ending, not borrowed.
      lent: cap > 0 ? Math.max(0, held - cap) : 0,
      capFraction,
      capOverridden: own !== null,
      cap,
      poolSlots,
      ready,
      waitingOnCap: held >= cap ? ready : 0,
      inBackoff: num(r.backoff),
      waitingOnDeps: num(r.waiting),
    };
  });
  const poolNames = [...new Set([...livePools.map((p) => p.pool), ...dags.map((d) => d.pool)])];
  const pools = poolNames
    .map((name): PoolShare => {
      const live = livePools.find((p) => p.pool === name);
      const slots = live?.slots ?? 0;
      return {
        pool: name,
        liveWorkers: live?.liveWorkers ?? 0,
        slots,
        cap: capOf(slots, opts.capFraction),
        // The schedulers' own rule (fairshare/lend-check.ts), from the same live slots.
        reserve: lendReserve === null ? null : reserveOf(lendReserve, slots),
        lent: dags.filter((d) => d.pool === name).reduce((n, d) => n + d.lent, 0),
      };
    })
    .sort((a, b) => (a.pool === DEFAULT_POOL ? -1 : b.pool === DEFAULT_POOL ? 1 : a.pool.localeCompare(b.pool)));
  return { ...pool, capFraction: opts.capFraction, lendReserve, cap: capOf(slotsOf.get(DEFAULT_POOL) ?? 0, opts.capFraction), pools, dags };
}

export interface ShareHistory {
  stepMs: number;
  /** Bucket start times, oldest first (ms since the epoch, store time). */
  times: number[];
  series: { dagId: string; held: number[] }[];
}

const LEASE_START = ['lease:granted'];
const LEASE_END = ['job:succeeded', 'job:failed', 'job:retrying', 'lease:expired', 'lease:released'];

/**
 * Leases held over time per DAG, rebuilt backwards from the event log: the count held at a
 * past instant is the count held now, minus the grants since, plus the lease ends since.
 * Each event type is read by the (type, at) index over the window only.
 */
export async function shareHistory(db: ConsoleDb, opts: { dagIds: string[]; currentHeld: Map<string, number>; windowMs: number; stepMs: number }): Promise<ShareHistory> {
  const buckets = Math.max(1, Math.ceil(opts.windowMs / opts.stepMs));
  const [nowRow] = await query(db, sql`select now() as now`);
  const nowMs = new Date(String(nowRow?.now)).getTime();
  const times = Array.from({ length: buckets + 1 }, (_, i) => nowMs - (buckets - i) * opts.stepMs);
  if (opts.dagIds.length === 0) return { stepMs: opts.stepMs, times, series: [] };
  const result = await query(
    db,
    sql`select dag_id, floor(extract(epoch from (now() - at)) * 1000 / ${opts.stepMs})::int as ago,
          sum(case when type = any(${sql.param(LEASE_START)}::text[]) then 1 else -1 end) as delta
        from events
        where type = any(${sql.param([...LEASE_START, ...LEASE_END])}::text[])
          and at > now() - ${opts.windowMs}::float8 * interval '1 millisecond'
          and dag_id = any(${sql.param(opts.dagIds)}::text[])
        group by 1, 2`,
  );
  const deltas = new Map<string, number[]>();
  for (const r of result) {
    const list = deltas.get(String(r.dag_id)) ?? new Array<number>(buckets + 1).fill(0);
    const ago = Math.min(Math.max(num(r.ago), 0), buckets);
    list[ago]! += num(r.delta);
    deltas.set(String(r.dag_id), list);
  }
  const series = opts.dagIds.map((dagId) => {
    const list = deltas.get(dagId) ?? new Array<number>(buckets + 1).fill(0);
    const held = new Array<number>(buckets + 1).fill(0);
    let level = opts.currentHeld.get(dagId) ?? 0;
    // Walk from now backwards: held at the start of bucket k ago is the level after undoing
    // every change that happened less than k buckets ago.
    for (let ago = 0; ago <= buckets; ago++) {
      held[buckets - ago] = Math.max(0, level);
      level -= list[ago]!;
    }
    return { dagId, held };
  });
  return { stepMs: opts.stepMs, times, series };
}
