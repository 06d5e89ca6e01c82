import { sql } from 'drizzle-orm';
import { capOf, poolSnapshot, type PoolSnapshot } from './pool';
import { num, numOrNull, query, type ConsoleDb } from './sql';

export interface DagShare {
  dagId: string;
  /** Leases the DAG holds now, across its running runs. */
  held: number;
  /** The DAG's own cap fraction when its spec sets one, else the cluster's. */
  capFraction: number;
  capOverridden: boolean;
  cap: number;
  /** Ready jobs whose backoff has passed. */
  ready: number;
  /** Of those, the ones that wait only because the DAG is at its cap. */
  waitingOnCap: number;
  /** Ready jobs still inside a retry backoff. */
  inBackoff: number;
  /** Jobs whose dependencies have not all succeeded yet. */
  waitingOnDeps: number;
}

export interface FairShareSnapshot extends PoolSnapshot {
  capFraction: number;
  /** The cap a DAG without its own capFraction gets in this pool. */
  cap: number;
  dags: DagShare[];
}

/**
 * Per DAG with work in flight: leases held against the cap of the current pool, and why its
 * ready jobs wait. Only jobs of running runs are read, found through the runs' state index,
 * so the cost follows the work in flight and not the size of the job history.
 */
export async function fairShare(db: ConsoleDb, opts: { capFraction: number; liveWindowMs: number; limit?: number }): Promise<FairShareSnapshot> {
  const pool = await poolSnapshot(db, opts.liveWindowMs);
  const shards = Array.from({ length: Math.max(pool.shardCount, 1) }, (_, i) => i);
  const result = await query(
    db,
    sql`select j.dag_id,
          count(*) filter (where j.state = 'leased') as held,
          count(*) filter (where j.state = 'ready' and (j.next_attempt_at is null or j.next_attempt_at <= now())) as ready,
          count(*) filter (where j.state = 'ready' and j.next_attempt_at > now()) as backoff,
          count(*) filter (where j.state = 'waiting') as waiting,
          (select (v.spec->>'capFraction')::float8 from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version where d.id = j.dag_id) as cap_fraction
        from runs r join jobs j on j.run_id = r.id
        where r.shard = any(${sql.param(shards)}::int[]) and r.state = 'running'
          and j.state in ('leased', 'ready', 'waiting')
        group by j.dag_id
        order by count(*) filter (where j.state = 'leased') desc, j.dag_id
        limit ${opts.limit ?? 200}`,
  );
  const dags = result.map((r): DagShare => {
    const own = numOrNull(r.cap_fraction);
    const capFraction = own ?? opts.capFraction;
    const cap = capOf(pool.poolSlots, capFraction);
    const held = num(r.held);
    const ready = num(r.ready);
    return {
      dagId: String(r.dag_id),
      held,
      capFraction,
      capOverridden: own !== null,
      cap,
      ready,
      waitingOnCap: held >= cap ? ready : 0,
      inBackoff: num(r.backoff),
      waitingOnDeps: num(r.waiting),
    };
  });
  return { ...pool, capFraction: opts.capFraction, cap: capOf(pool.poolSlots, opts.capFraction), dags };
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
