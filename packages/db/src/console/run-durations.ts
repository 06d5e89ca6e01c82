import { sql } from 'drizzle-orm';
import { NotFoundError, type RunId, type RunState } from '@fenceline/core';
import { date, num, query, runIdOf, type ConsoleDb } from './sql';

/** A run's duration beside the succeeded runs of its DAG before it, for the run page. */
export interface RunDurations {
  now: Date;
  run: { id: RunId; state: RunState; scheduledAt: Date; durationMs: number | null; open: boolean };
  /** The DAG's succeeded runs scheduled before this one, oldest first, at most `limit` of them. */
  history: { id: RunId; scheduledAt: Date; durationMs: number }[];
  /** The median of the history's durations; null when there is none. */
  medianMs: number | null;
}

/** The middle value (the mean of the middle two for an even count); null for none. */
export function median(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * The run and the last `limit` succeeded runs of its DAG scheduled before it, in one
 * statement walking runs_dag_scheduled_at_key back from the run. Only succeeded runs make
 * the history: a failed or cancelled run stopped early, and its shorter time would pull
 * the median down and hide a slow run.
 */
export async function runDurations(db: ConsoleDb, runId: RunId, opts: { limit: number }): Promise<RunDurations> {
  const limit = Math.max(1, Math.min(100, Math.floor(opts.limit)));
  const result = await query(
    db,
    sql`with me as (select id, dag_id, scheduled_at, state, started_at, ended_at from runs where id = ${runId})
        select me.id, me.state, me.scheduled_at, me.started_at is not null as started, me.ended_at is null as open,
               extract(epoch from (coalesce(me.ended_at, now()) - me.started_at)) * 1000 as run_ms, now() as now,
               (select json_agg(json_build_array(h.id::text, h.scheduled_at, h.ms) order by h.scheduled_at, h.id)
                from (select p.id, p.scheduled_at, round(extract(epoch from (p.ended_at - p.started_at)) * 1000) as ms
                      from runs p
                      where p.dag_id = me.dag_id and (p.scheduled_at, p.id) < (me.scheduled_at, me.id)
                        and p.state = 'succeeded' and p.started_at is not null and p.ended_at is not null
                      order by p.scheduled_at desc, p.id desc limit ${limit}) h) as history
        from me`,
  );
  const row = result[0];
  if (!row) throw new NotFoundError(`run ${runId} does not exist`, { runId });
  const history = ((row.history ?? []) as [string, string, number][]).map(([id, at, ms]) => ({ id: runIdOf(id), scheduledAt: date(at), durationMs: num(ms) }));
  return {
    now: date(row.now),
    run: {
      id: runIdOf(row.id),
      state: row.state as RunState,
      scheduledAt: date(row.scheduled_at),
      durationMs: row.started ? Math.round(num(row.run_ms)) : null,
      open: Boolean(row.open),
    },
    history,
    medianMs: median(history.map((h) => h.durationMs)),
  };
}
