import { sql } from 'drizzle-orm';
import { InvalidInputError, LIMITS, NotFoundError, type LeaderToken, type ListRunsQuery, type NewJob, type RunRow, type JobRow } from '@fenceline/core';
import { array, firstRow, rows, ts, type Db, type Executor } from './db';
import { leadCte, selectWithLead, writtenRows } from './lead';
import { isId, jobFromRow, runFromRow } from './rows';

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
          n as (select pg_notify('fenceline', json_build_object('kind', 'run-queued', 'shard', shard, 'runId', id::text)::text) from w)
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
 * The tick's write, in one transaction: first the compare-and-set of next_run_at (with
 * the lead check, whose FOR SHARE lock then lasts to commit), then one queued run per
 * slot. ON CONFLICT DO NOTHING makes a tick that runs twice, or two leaders racing
 * across a failover, create one run per (dag, scheduled_at). Runs pin the DAG's current
 * version. A paused DAG or a moved next_run_at writes nothing.
 */
export async function createScheduledRuns(
  db: Db,
  token: LeaderToken,
  dagId: string,
  expectedNextRunAt: Date,
  slots: Date[],
  nextRunAt: Date | null,
): Promise<RunRow[]> {
  if (slots.length > LIMITS.maxRunsPerDagPerTick) {
    throw new InvalidInputError(`one tick may create at most ${LIMITS.maxRunsPerDagPerTick} runs of a DAG, got ${slots.length} slots`, {
      dagId,
      slots: slots.length,
      limit: LIMITS.maxRunsPerDagPerTick,
    });
  }
  return db.transaction(async (tx) => {
    const moved = writtenRows(
      await rows(
        tx,
        sql`with ${leadCte(token)},
            w as (
              update dags set next_run_at = ${nextRunAt === null ? null : ts(nextRunAt)}
              where id = ${dagId} and shard = ${token.shard} and not paused
                and next_run_at = ${ts(expectedNextRunAt)} and exists (select 1 from lead)
              returning id, current_version, shard
            )
            ${selectWithLead('id')}`,
      ),
      token,
      'createScheduledRuns',
    );
    const dag = moved[0];
    if (!dag || slots.length === 0) return [];
    const created = await rows(
      tx,
      sql`insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state)
          select ${dagId}, ${dag.current_version}, ${dag.shard}, slot, 'schedule', 'queued'
          from unnest(${array(slots.map((s) => s.toISOString()), 'timestamptz')}) as slot
          on conflict (dag_id, scheduled_at) do nothing
          returning ${RUN_COLUMNS}`,
    );
    return created.map(runFromRow).sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
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
 * queued -> running and every job of the run inserted, in one statement: the jobs are
 * inserted from the run row the update returned, so when the run was not queued (or the
 * lead check failed) no job is inserted either. The job list travels as one jsonb
 * parameter because a DAG can have 20,000 tasks.
 */
export async function startRun(db: Executor, token: LeaderToken, runId: string, jobs: NewJob[]): Promise<JobRow[]> {
  if (jobs.length > LIMITS.maxTasksPerDag) {
    throw new InvalidInputError(`a run may have at most ${LIMITS.maxTasksPerDag} jobs, got ${jobs.length}`, { runId, jobs: jobs.length });
  }
  if (!isId(runId)) return [];
  const payload = JSON.stringify(
    jobs.map((j) => ({
      task_id: j.taskId,
      state: j.state,
      max_attempts: j.maxAttempts,
      priority: j.priority,
      retry_backoff_ms: j.retryBackoffMs,
      retry_backoff_max_ms: j.retryBackoffMaxMs,
      timeout_ms: j.timeoutMs,
    })),
  );
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        started as (
          update runs set state = 'running', started_at = now()
          where id = ${runId} and shard = ${token.shard} and state = 'queued' and exists (select 1 from lead)
          returning id, dag_id, shard
        ),
        w as (
          insert into jobs (run_id, dag_id, shard, task_id, state, max_attempts, priority, retry_backoff_ms, retry_backoff_max_ms, timeout_ms, ready_at)
          select s.id, s.dag_id, s.shard, t.task_id, t.state, t.max_attempts, t.priority, t.retry_backoff_ms, t.retry_backoff_max_ms, t.timeout_ms,
            case when t.state = 'ready' then now() end
          from started s
          cross join jsonb_to_recordset(${payload}::jsonb) as t(task_id text, state text, max_attempts int, priority int,
            retry_backoff_ms int, retry_backoff_max_ms int, timeout_ms int)
          returning *
        )
        ${selectWithLead('id')} order by w.id`,
  );
  return writtenRows(result, token, 'startRun').map(jobFromRow);
}

/** running -> succeeded | failed; false when the run was not running. */
export async function finishRun(db: Executor, token: LeaderToken, runId: string, state: 'succeeded' | 'failed'): Promise<boolean> {
  if (!isId(runId)) return false;
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        w as (
          update runs set state = ${state}, ended_at = now()
          where id = ${runId} and shard = ${token.shard} and state = 'running' and exists (select 1 from lead)
          returning id
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'finishRun').length > 0;
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
