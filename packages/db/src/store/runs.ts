import { sql } from 'drizzle-orm';
import { InvalidInputError, LIMITS, NotFoundError, type LeaderToken, type ListRunsQuery, type NewJob, type RunRow, type JobRow, type ScheduledRunsItem } from '@fenceline/core';
import { array, firstRow, rows, ts, type Db, type Executor } from './db';
import { leadCte, selectWithLead, writtenRows } from './lead';
import { isId, jobFromRow, runFromRow, toId } from './rows';

const RUN_COLUMNS = sql`id, dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at`;

/**
 * Queues a manual run at store time now and tells the shard's leader, in one statement
 * (the notice goes out when it commits). Two triggers of one DAG in the same microsecond
 * would collide on (dag_id, scheduled_at); the retry takes clock_timestamp(), which moves.
 */
export async function triggerRun(db: Db, dagId: string): Promise<RunRow> {
  for (const at of [sql`now()`, sql`clock_timestamp()`, sql`clock_timestamp()`]) {
    const result = await rows(
      db,
      sql`with d as (select id, shard, current_version from dags where id = ${dagId}),
          w as (
            insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state)
            select id, current_version, shard, ${at}, 'manual', 'queued' from d
            on conflict (dag_id, scheduled_at) do nothing
            returning *
          ),
          n as (select pg_notify('fenceline', json_build_object('kind', 'run-queued', 'shard', shard, 'runId', id::text, 'dagId', dag_id, 'dagVersion', dag_version, 'scheduledAt', scheduled_at)::text) from w)
          select exists (select 1 from d) as dag_found, (select count(*) from n) as notified, w.*
          from (select 1) as one left join w on true`,
    );
    const row = result[0];
    if (row?.dag_found !== true) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    if (row.id !== null && row.id !== undefined) return runFromRow(row);
  }
  throw new Error(`could not queue a manual run of ${dagId}: scheduled_at collided three times`);
}

/**
 * The tick's write for many due DAGs of one shard, in one transaction: first the
 * compare-and-set of each DAG's next_run_at (with the lead check, whose FOR SHARE lock
 * then lasts to commit), then one queued run per slot of each DAG that moved. ON CONFLICT
 * DO NOTHING makes a tick that runs twice, or two leaders racing across a failover, create
 * one run per (dag, scheduled_at). Runs pin the DAG's current version. A paused DAG or a
 * moved next_run_at writes nothing for that DAG. DAG rows are locked in id order, so two
 * batches that overlap cannot deadlock.
 */
export async function createScheduledRunsMany(db: Db, token: LeaderToken, items: ScheduledRunsItem[]): Promise<RunRow[][]> {
  for (const item of items) {
    if (item.slots.length > LIMITS.maxRunsPerDagPerTick) {
      throw new InvalidInputError(`one tick may create at most ${LIMITS.maxRunsPerDagPerTick} runs of a DAG, got ${item.slots.length} slots`, {
        dagId: item.dagId,
        slots: item.slots.length,
        limit: LIMITS.maxRunsPerDagPerTick,
      });
    }
  }
  // A DAG named twice is written for its first item only.
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    if (!first.has(item.dagId)) first.set(item.dagId, i);
  });
  const unique = [...first.values()].map((i) => items[i]!);
  const out: RunRow[][] = items.map(() => []);
  if (unique.length === 0) return out;
  return db.transaction(async (tx) => {
    const moved = writtenRows(
      await rows(
        tx,
        sql`with ${leadCte(token)},
            i as (
              select * from unnest(${array(unique.map((u) => u.dagId), 'text')}, ${array(unique.map((u) => u.expectedNextRunAt.toISOString()), 'text')}::timestamptz[],
                ${array(unique.map((u) => u.nextRunAt?.toISOString() ?? null), 'text')}::timestamptz[]) as i(dag_id, expected, next_run_at)
            ),
            locked as materialized (
              select d.id from dags d join i on i.dag_id = d.id
              where d.shard = ${token.shard} and not d.paused and d.next_run_at = i.expected and exists (select 1 from lead)
              order by d.id
              for update of d
            ),
            w as (
              update dags d set next_run_at = i.next_run_at
              from i where d.id = i.dag_id and d.id in (select id from locked)
              returning d.id
            )
            ${selectWithLead('id')}`,
      ),
      token,
      'createScheduledRuns',
    );
    const movedIds = new Set(moved.map((r) => String(r.id)));
    const pairs = unique.filter((u) => movedIds.has(u.dagId)).flatMap((u) => u.slots.map((slot) => ({ dagId: u.dagId, slot })));
    if (pairs.length === 0) return out;
    const created = await rows(
      tx,
      sql`insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state)
          select d.id, d.current_version, d.shard, s.slot, 'schedule', 'queued'
          from unnest(${array(pairs.map((p) => p.dagId), 'text')}, ${array(pairs.map((p) => p.slot.toISOString()), 'timestamptz')}) as s(dag_id, slot)
          join dags d on d.id = s.dag_id
          on conflict (dag_id, scheduled_at) do nothing
          returning ${RUN_COLUMNS}`,
    );
    for (const run of created.map(runFromRow)) out[first.get(run.dagId)!]!.push(run);
    for (const list of out) list.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    return out;
  });
}

/** Queued runs of the shard, oldest first, read under the lead check. */
export async function queuedRuns(db: Executor, token: LeaderToken): Promise<RunRow[]> {
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        w as (select ${RUN_COLUMNS} from runs where shard = ${token.shard} and state = 'queued' and exists (select 1 from lead))
        ${selectWithLead('id')} order by w.id`,
  );
  return writtenRows(result, token, 'queuedRuns').map(runFromRow);
}

/**
 * queued -> running for many runs of one shard, and every job of each inserted, in one
 * statement: the jobs are inserted from the run rows the update returned, so a run that
 * was not queued (or a failed lead check) inserts no job either. The job lists travel as
 * one jsonb parameter because a DAG can have 20,000 tasks.
 */
export async function startRuns(db: Executor, token: LeaderToken, items: { runId: string; jobs: NewJob[] }[]): Promise<JobRow[][]> {
  for (const { runId, jobs } of items) {
    if (jobs.length > LIMITS.maxTasksPerDag) {
      throw new InvalidInputError(`a run may have at most ${LIMITS.maxTasksPerDag} jobs, got ${jobs.length}`, { runId, jobs: jobs.length });
    }
  }
  // A run named twice starts once, for its first item.
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    if (isId(item.runId) && !first.has(item.runId)) first.set(item.runId, i);
  });
  const out: JobRow[][] = items.map(() => []);
  if (first.size === 0) return out;
  const payload = JSON.stringify(
    [...first.values()].flatMap((i) =>
      items[i]!.jobs.map((j) => ({
        run_id: items[i]!.runId,
        task_id: j.taskId,
        state: j.state,
        max_attempts: j.maxAttempts,
        priority: j.priority,
        retry_backoff_ms: j.retryBackoffMs,
        retry_backoff_max_ms: j.retryBackoffMaxMs,
        timeout_ms: j.timeoutMs,
      })),
    ),
  );
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        started as (
          update runs set state = 'running', started_at = now()
          where id = any(${array([...first.keys()], 'bigint')}) and shard = ${token.shard} and state = 'queued' and exists (select 1 from lead)
          returning id, dag_id, shard
        ),
        w as (
          insert into jobs (run_id, dag_id, shard, task_id, state, max_attempts, priority, retry_backoff_ms, retry_backoff_max_ms, timeout_ms, ready_at)
          select s.id, s.dag_id, s.shard, t.task_id, t.state, t.max_attempts, t.priority, t.retry_backoff_ms, t.retry_backoff_max_ms, t.timeout_ms,
            case when t.state = 'ready' then now() end
          from started s
          join jsonb_to_recordset(${payload}::jsonb) as t(run_id bigint, task_id text, state text, max_attempts int, priority int,
            retry_backoff_ms int, retry_backoff_max_ms int, timeout_ms int) on t.run_id = s.id
          returning *
        )
        ${selectWithLead('id')} order by w.id`,
  );
  for (const job of writtenRows(result, token, 'startRun').map(jobFromRow)) out[first.get(job.runId)!]!.push(job);
  return out;
}

/** running -> succeeded | failed for many runs; per item whether it moved (a run named twice moves once). */
export async function finishRuns(db: Executor, token: LeaderToken, items: { runId: string; state: 'succeeded' | 'failed' }[]): Promise<boolean[]> {
  const first = new Map<string, number>();
  items.forEach((item, i) => {
    if (isId(item.runId) && !first.has(item.runId)) first.set(item.runId, i);
  });
  if (first.size === 0) return items.map(() => false);
  const unique = [...first.values()].map((i) => items[i]!);
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        i as (select * from unnest(${array(unique.map((u) => u.runId), 'bigint')}, ${array(unique.map((u) => u.state), 'text')}) as i(run_id, state)),
        w as (
          update runs r set state = i.state, ended_at = now()
          from i where r.id = i.run_id and r.shard = ${token.shard} and r.state = 'running' and exists (select 1 from lead)
          returning r.id
        )
        ${selectWithLead('id')}`,
  );
  const moved = new Set(writtenRows(result, token, 'finishRun').map((r) => toId(r.id)));
  return items.map((item, i) => first.get(item.runId) === i && moved.has(item.runId));
}

export async function getRun(db: Executor, runId: string): Promise<RunRow> {
  const row = isId(runId) ? await firstRow(db, sql`select ${RUN_COLUMNS} from runs where id = ${runId}`) : undefined;
  if (!row) throw new NotFoundError(`run ${runId} does not exist`, { runId });
  return runFromRow(row);
}

/** Newest first; `beforeId` pages backwards. */
export async function listRuns(db: Executor, query: ListRunsQuery): Promise<RunRow[]> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
  const conditions = [sql`true`];
  if (query.dagId !== undefined) conditions.push(sql`dag_id = ${query.dagId}`);
  if (query.state !== undefined) conditions.push(sql`state = ${query.state}`);
  if (query.beforeId !== undefined && isId(query.beforeId)) conditions.push(sql`id < ${query.beforeId}`);
  const result = await rows(
    db,
    sql`select ${RUN_COLUMNS} from runs where ${sql.join(conditions, sql` and `)} order by id desc limit ${limit}`,
  );
  return result.map(runFromRow);
}
