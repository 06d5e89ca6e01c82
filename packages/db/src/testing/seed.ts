import { sql } from 'drizzle-orm';
import { canonicalJson, shardOf } from '@fenceline/core';
import { rows, type Executor } from '../store/db';

/**
 * Bulk-inserts `count` small manual DAGs (one noop task each) for load tests of the console:
 * one statement per 10,000 DAGs, each with its head row and version 1. Manual DAGs have no
 * next run, so the schedulers' tick never picks them up. Test support only (@fenceline/db/testing).
 */
export async function seedDags(db: Executor, opts: { count: number; prefix: string; shardCount: number }): Promise<void> {
  const batch = 10_000;
  for (let start = 0; start < opts.count; start += batch) {
    const ids: string[] = [];
    const shards: number[] = [];
    const specs: string[] = [];
    for (let i = start; i < Math.min(start + batch, opts.count); i++) {
      const id = `${opts.prefix}-${String(i).padStart(6, '0')}`;
      ids.push(id);
      shards.push(shardOf(id, opts.shardCount));
      specs.push(
        canonicalJson({
          id,
          name: `Seeded DAG ${i}`,
          schedule: { kind: 'manual' },
          catchup: { policy: 'latest', windowMs: 86_400_000 },
          maxActiveRuns: 1,
          paused: false,
          tasks: [{ id: 'only', type: 'noop', config: {}, dependsOn: [], retries: 0, retryBackoffMs: 5000, retryBackoffMaxMs: 300000, timeoutMs: 3600000, priority: 0 }],
        }),
      );
    }
    await rows(
      db,
      sql`with input as (
            select * from unnest(${sql.param(ids)}::text[], ${sql.param(shards)}::int[], ${sql.param(specs)}::text[]) as t(id, shard, spec)
          ), heads as (
            insert into dags (id, shard, current_version, paused, next_run_at)
            select id, shard, 1, false, null from input on conflict (id) do nothing returning id
          )
          insert into dag_versions (dag_id, version, spec)
          select i.id, 1, i.spec::jsonb from input i join heads h on h.id = i.id`,
    );
  }
  await rows(db, sql`analyze dags`);
}

/**
 * Bulk-inserts a manual DAG of `tasks` tasks (a root and its fan-out) with `runs` ended runs
 * an hour apart and every job of each: the grid's load test. Job states and times follow
 * from the run and task numbers, so a test can work out what each cell must show: in run r
 * (1 = oldest), part p (0 = root) failed when (r * 7 + p) % 23 = 0, and took
 * 1 + (r + p) % 50 seconds; the root succeeded in every run. Test support only (@fenceline/db/testing).
 */
export async function seedRunGrid(db: Executor, opts: { dagId: string; tasks: number; runs: number; shardCount: number }): Promise<void> {
  const ids = Array.from({ length: opts.tasks }, (_, i) => (i === 0 ? 'root' : `part-${String(i).padStart(3, '0')}`));
  const spec = canonicalJson({
    id: opts.dagId,
    name: `Seeded grid of ${opts.tasks} tasks`,
    schedule: { kind: 'manual' },
    catchup: { policy: 'latest', windowMs: 86_400_000 },
    maxActiveRuns: 1,
    paused: false,
    tasks: ids.map((id, i) => ({
      id,
      type: 'noop',
      config: {},
      dependsOn: i === 0 ? [] : ['root'],
      retries: 0,
      retryBackoffMs: 5000,
      retryBackoffMaxMs: 300000,
      timeoutMs: 3600000,
      priority: 0,
    })),
  });
  const shard = shardOf(opts.dagId, opts.shardCount);
  await rows(
    db,
    sql`with head as (
          insert into dags (id, shard, current_version, paused, next_run_at) values (${opts.dagId}, ${shard}, 1, false, null) returning id
        ), version as (
          insert into dag_versions (dag_id, version, spec) select id, 1, ${spec}::jsonb from head returning dag_id
        ), made as (
          insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at)
          select v.dag_id, 1, ${shard}, timestamptz '2026-01-01 00:00:00Z' + g * interval '1 hour', 'manual',
                 case when exists (select 1 from generate_series(1, ${opts.tasks - 1}) p where (g * 7 + p) % 23 = 0) then 'failed' else 'succeeded' end,
                 timestamptz '2026-01-01 00:00:00Z' + g * interval '1 hour', timestamptz '2026-01-01 00:00:00Z' + g * interval '1 hour',
                 timestamptz '2026-01-01 00:00:00Z' + g * interval '1 hour' + interval '2 minutes'
          from version v, generate_series(1, ${opts.runs}) g
          returning id, scheduled_at
        ), numbered as (
          select id, scheduled_at, row_number() over (order by scheduled_at) as r from made
        )
        insert into jobs (run_id, dag_id, shard, task_id, state, attempt, max_attempts, retry_backoff_ms, retry_backoff_max_ms, timeout_ms, ready_at, leased_at, ended_at)
        select n.id, ${opts.dagId}, ${shard}, t.task_id,
               case when t.p > 0 and (n.r * 7 + t.p) % 23 = 0 then 'failed' else 'succeeded' end, 1, 1, 5000, 300000, 3600000,
               n.scheduled_at, n.scheduled_at, n.scheduled_at + (1 + (n.r + t.p) % 50) * interval '1 second'
        from numbered n,
             (select task_id, (o - 1)::int as p from unnest(${sql.param(ids)}::text[]) with ordinality as u(task_id, o)) t`,
  );
  await rows(db, sql`analyze runs`);
  await rows(db, sql`analyze jobs`);
}
