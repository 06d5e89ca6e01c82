import { sql } from 'drizzle-orm';
import type { DagId, JobId, RunId } from '@fenceline/core';
import { dagIdOf, dateOrNull, jobIdOf, num, query, runIdOf, type ConsoleDb } from './sql';

/** A ready job that consumes a limit and holds no lease yet. */
export interface LimitWaiter {
  jobId: JobId;
  runId: RunId;
  dagId: DagId;
  taskId: string;
  units: number;
  readyAt: Date | null;
}

/**
 * Who waits for each resource limit: the ready jobs that consume it, oldest ready first, at
 * most `perLimit` of them per limit (the store's waiting count says how many there are in
 * all). Only ready jobs that consume some limit are read, through their partial index.
 */
export async function limitWaiters(db: ConsoleDb, opts: { perLimit: number }): Promise<Map<string, LimitWaiter[]>> {
  const result = await query(
    db,
    sql`select name, id, run_id, dag_id, task_id, units, ready_at from (
          select k.name, j.id, j.run_id, j.dag_id, j.task_id, k.units, j.ready_at,
            row_number() over (partition by k.name order by j.ready_at nulls last, j.id) as n
          from jobs j cross join lateral jsonb_each_text(j.resources) as k(name, units)
          where j.state = 'ready' and j.resources is not null
        ) w where n <= ${opts.perLimit} order by name, n`,
  );
  const byName = new Map<string, LimitWaiter[]>();
  for (const r of result) {
    const list = byName.get(String(r.name)) ?? [];
    list.push({ jobId: jobIdOf(r.id), runId: runIdOf(r.run_id), dagId: dagIdOf(r.dag_id), taskId: String(r.task_id), units: num(r.units), readyAt: dateOrNull(r.ready_at) });
    byName.set(String(r.name), list);
  }
  return byName;
}
