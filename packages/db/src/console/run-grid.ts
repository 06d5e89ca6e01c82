import { sql } from 'drizzle-orm';
import { NotFoundError, type DagId, type JobState, type RunId, type RunRow, type RunState } from '@fenceline/core';
import { date, dateOrNull, num, numOrNull, query, runIdOf, type ConsoleDb } from './sql';

/** The most runs one grid shows; the page offers a few sizes up to this one. */
export const MAX_GRID_RUNS = 100;

/** One row of the grid: a task of the DAG's current version, or one only older runs have. */
export interface GridTask {
  id: string;
  dependsOn: string[];
  /** False for a task the current version no longer has (older runs still show its jobs). */
  current: boolean;
}

/** One column of the grid: a run and the state of each task's job in it. */
export interface GridRun {
  id: RunId;
  scheduledAt: Date;
  state: RunState;
  trigger: RunRow['trigger'];
  dagVersion: number;
  startedAt: Date | null;
  endedAt: Date | null;
  /** From its start to its end, or to the store's time now while it runs; null before it starts. */
  durationMs: number | null;
  /** Per row of RunGrid.tasks: the job's state, or null where the run has no job of that task. */
  states: (JobState | null)[];
  /** Per row: the job's attempt count (its retry budget's), 0 where it has none. */
  attempts: number[];
  /**
   * Per row: how long the job's latest lease ran, from its grant to the job's end (or to the
   * store's time now while leased); null for a job never leased or waiting to be leased again.
   */
  durationsMs: (number | null)[];
}

export interface RunGrid {
  now: Date;
  tasks: GridTask[];
  /** Newest first, by scheduled time. */
  runs: GridRun[];
}

/** A job's latest lease time counts as its duration only while that lease is live or it ended the job. */
const TIMED_STATES = new Set(['leased', 'succeeded', 'failed']);

/**
 * The DAG's last `limit` runs with every job's state, attempt count and duration: the DAG
 * page's grid of runs by task. One statement: the runs by runs_dag_scheduled_at_key, each
 * run's jobs by jobs_run_task_key folded into one JSON array per run (so 200 tasks by 100
 * runs is 100 rows, not 20,000), and one more row, joined on nothing, with the current
 * version's tasks in spec order, which give the grid its rows.
 */
export async function runGrid(db: ConsoleDb, dagId: DagId, opts: { limit: number }): Promise<RunGrid> {
  const limit = Math.max(1, Math.min(MAX_GRID_RUNS, Math.floor(opts.limit)));
  const result = await query(
    db,
    sql`with head as (
          select (select json_agg(json_build_array(t->>'id', coalesce(t->'dependsOn', '[]'::jsonb))) from jsonb_array_elements(v.spec->'tasks') t) as tasks
          from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version
          where d.id = ${dagId}
        ), r as (
          select id, scheduled_at, state, trigger, dag_version, started_at, ended_at
          from runs where dag_id = ${dagId}
          order by scheduled_at desc, id desc limit ${limit}
        )
        select r.id, r.scheduled_at, r.state, r.trigger, r.dag_version, r.started_at, r.ended_at,
               extract(epoch from (coalesce(r.ended_at, now()) - r.started_at)) * 1000 as run_ms,
               j.jobs, head.tasks, now() as now
        from r
        left join lateral (
          select json_agg(json_build_array(task_id, state, attempt,
                   case when state in ('leased', 'succeeded', 'failed') and leased_at is not null
                        then round(extract(epoch from (coalesce(ended_at, now()) - leased_at)) * 1000) end)) as jobs
          from jobs where run_id = r.id
        ) j on true
        full join head on false
        order by r.scheduled_at desc nulls last, r.id desc`,
  );
  const headRow = result.find((row) => row.id === null || row.id === undefined);
  if (!headRow) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
  const tasks: GridTask[] = ((headRow.tasks ?? []) as [string, string[]][]).map(([id, dependsOn]) => ({ id, dependsOn, current: true }));
  const rowOf = new Map(tasks.map((t, i) => [t.id, i]));
  const runRows = result.filter((row) => row !== headRow);
  // Tasks the current version dropped still have jobs in older runs: they get rows after the current ones.
  for (const row of runRows) {
    for (const [taskId] of (row.jobs ?? []) as [string][]) {
      if (!rowOf.has(taskId)) {
        rowOf.set(taskId, tasks.length);
        tasks.push({ id: taskId, dependsOn: [], current: false });
      }
    }
  }
  const runs = runRows.map((row): GridRun => {
    const states: (JobState | null)[] = tasks.map(() => null);
    const attempts = tasks.map(() => 0);
    const durationsMs: (number | null)[] = tasks.map(() => null);
    for (const [taskId, state, attempt, ms] of (row.jobs ?? []) as [string, JobState, number, number | null][]) {
      const i = rowOf.get(taskId)!;
      states[i] = state;
      attempts[i] = attempt;
      durationsMs[i] = TIMED_STATES.has(state) ? numOrNull(ms) : null;
    }
    const startedAt = dateOrNull(row.started_at);
    return {
      id: runIdOf(row.id),
      scheduledAt: date(row.scheduled_at),
      state: row.state as RunState,
      trigger: row.trigger as RunRow['trigger'],
      dagVersion: num(row.dag_version),
      startedAt,
      endedAt: dateOrNull(row.ended_at),
      durationMs: startedAt ? Math.round(num(row.run_ms)) : null,
      states,
      attempts,
      durationsMs,
    };
  });
  return { now: date(headRow.now), tasks, runs };
}
