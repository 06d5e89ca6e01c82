import { sql } from 'drizzle-orm';
import { canonicalJson, shardOf } from '@fenceline/core';
import { rows, type Executor } from '../store/db';

/**
 * Bulk-inserts `count` small manual DAGs (one noop task each) for load tests of the console:
 * one statement per 10,000 DAGs, each with its head row and version 1. Manual DAGs have no
 * next run, so the schedulers' tick never picks them up. Test helper only.
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
