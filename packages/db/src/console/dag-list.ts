import { sql } from 'drizzle-orm';
import type { DagId, RunId, Schedule } from '@fenceline/core';
import type { ListDagsQuery } from '@fenceline/core/store';
import { listDags } from '../store/dags';
import { capOf, poolSnapshot } from './pool';
import { dateOrNull, num, query, runIdOrNull, type ConsoleDb } from './sql';

export interface DagListRow {
  id: DagId;
  name: string | null;
  shard: number;
  version: number;
  schedule: Schedule;
  paused: boolean;
  nextRunAt: Date | null;
  updatedAt: Date;
  taskCount: number;
  lastRun: { id: RunId; state: string; scheduledAt: Date; endedAt: Date | null } | null;
  /** Leases held now, and that as a fraction of the current pool. */
  held: number;
  shareOfPool: number;
  cap: number;
}

export interface DagListPage {
  rows: DagListRow[];
  total: number;
  /** Whether `total` is the planner's estimate (an unfiltered list of a large table). */
  totalIsEstimate: boolean;
  poolSlots: number;
  /** How long the store took to answer, so the console can show it beside the list. */
  queryMs: number;
}

/**
 * One page of the DAG list. The page itself is the store's listDags (cut by index before
 * any spec is read); the last run and the leases held are then read for the page's ids
 * only, by the runs (dag_id, id) index and the leased-jobs partial index. Nothing here
 * grows with the number of DAGs.
 */
export async function dagListPage(db: ConsoleDb, q: ListDagsQuery & { capFraction: number; liveWindowMs: number }): Promise<DagListPage> {
  const started = performance.now();
  const { rows: page, total } = await listDags(db, q);
  const ids = page.map((d) => d.id);
  const [extra, pool] = await Promise.all([
    ids.length === 0
      ? Promise.resolve([])
      : query(
          db,
          sql`select d.id,
                lr.id as run_id, lr.state as run_state, lr.scheduled_at as run_scheduled_at, lr.ended_at as run_ended_at,
                (select count(*) from jobs j where j.state = 'leased' and j.dag_id = d.id) as held
              from unnest(${sql.param(ids)}::text[]) as d(id)
              left join lateral (
                select id, state, scheduled_at, ended_at from runs r where r.dag_id = d.id order by r.id desc limit 1
              ) lr on true`,
        ),
    poolSnapshot(db, q.liveWindowMs),
  ]);
  const byId = new Map(extra.map((r) => [String(r.id), r]));
  const rows = page.map((d): DagListRow => {
    const r = byId.get(d.id);
    const held = num(r?.held);
    const runId = runIdOrNull(r?.run_id);
    return {
      id: d.id,
      name: d.spec.name ?? null,
      shard: d.shard,
      version: d.version,
      schedule: d.spec.schedule,
      paused: d.paused,
      nextRunAt: d.nextRunAt,
      updatedAt: d.updatedAt,
      taskCount: d.spec.tasks.length,
      lastRun: runId === null ? null : { id: runId, state: String(r?.run_state), scheduledAt: dateOrNull(r?.run_scheduled_at)!, endedAt: dateOrNull(r?.run_ended_at) },
      held,
      shareOfPool: pool.poolSlots > 0 ? held / pool.poolSlots : 0,
      cap: capOf(pool.poolSlots, d.spec.capFraction ?? q.capFraction),
    };
  });
  const estimate = !q.search?.trim() && total > 20_000;
  return { rows, total, totalIsEstimate: estimate, poolSlots: pool.poolSlots, queryMs: performance.now() - started };
}
