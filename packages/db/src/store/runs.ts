import { sql, type SQL } from 'drizzle-orm';
import {
  checkJobsPerRun,
  heldKeyOf,
  requestFingerprintText,
  resolveRunParams,
  InvalidInputError,
  LIMITS,
  NotFoundError,
  type DeposedLeaderError,
  type RunRow,
  type JobRow,
  type DagSpec,
} from '@fenceline/core';
import {
  type LeaderGroup,
  type LeaderToken,
  type ListRunsQuery,
  type NewJob,
  type ScheduledRunsItem,
  type CreatedRun,
  type TriggeredRun,
  type TriggerOptions,
} from '@fenceline/core/store';
import { array, firstRow, rows, type Db, type Executor } from './db';
import { firstOccurrences, leadCte, leadManyCte, ledGroups, perGroup, selectWithLead, selectWithLeadMany, writtenRows } from './lead';
import { storedFingerprint, checkStoredRequest } from './request-keys';
import { isId, jobFromRow, runFromRow, toId } from './rows';

const RUN_COLUMNS = sql`id, dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at, params`;

/**
 * New jobs as one json parameter, each tagged with the run (`run_id`) or DAG (`dag_id`) it
 * belongs to: a DAG can have 20,000 tasks (json, not jsonb: it is read once, row by row, so
 * building a jsonb tree of it first is wasted work).
 */
function jobsPayload<K extends 'run_id' | 'dag_id'>(key: K, lists: { key: string; jobs: NewJob[] }[]): string {
  return JSON.stringify(
    lists.flatMap((l) =>
      l.jobs.map((j) => ({
        [key]: l.key,
        task_id: j.taskId,
        state: j.state,
        max_attempts: j.maxAttempts,
        priority: j.priority,
        retry_backoff_ms: j.retryBackoffMs,
        retry_backoff_max_ms: j.retryBackoffMaxMs,
        timeout_ms: j.timeoutMs,
        resources: j.resources ?? null,
      })),
    ),
  );
}

/**
 * Inserts the jobs of `payload` (jobsPayload) for the runs of `runs`, a CTE or table with
 * columns id, dag_id and shard, matched on `key` (the payload's run_id to id, or its
 * dag_id to dag_id), keeping only the run rows `where` accepts. Returns the job rows.
 */
function insertJobs(runs: SQL, payload: string, key: 'run_id' | 'dag_id', where: SQL = sql``): SQL {
  const keyColumn = key === 'run_id' ? sql`run_id bigint` : sql`dag_id text`;
  const match = key === 'run_id' ? sql`t.run_id = r.id` : sql`t.dag_id = r.dag_id`;
  return sql`insert into jobs (run_id, dag_id, shard, task_id, state, max_attempts, priority, retry_backoff_ms, retry_backoff_max_ms, timeout_ms, ready_at, resources)
          select r.id, r.dag_id, r.shard, t.task_id, t.state, t.max_attempts, t.priority, t.retry_backoff_ms, t.retry_backoff_max_ms, t.timeout_ms,
            case when t.state = 'ready' then now() end, t.resources::jsonb
          from ${runs} r join json_to_recordset(${payload}::json) as t(${keyColumn}, task_id text, state text, max_attempts int, priority int,
            retry_backoff_ms int, retry_backoff_max_ms int, timeout_ms int, resources json) on ${match}
          ${where}
          returning *`;
}

/**
 * Queues a manual run at store time now and tells the shard's leader, in one statement
 * (the notice goes out when it commits). Two triggers of one DAG in the same microsecond
 * would collide on (dag_id, scheduled_at); the retry takes clock_timestamp(), which moves.
 *
 * With a request key, the key is stored with the run and runs_dag_request_key_idx lets
 * one run of the DAG hold it: a second trigger with the key inserts nothing and returns the
 * run that holds it. That run is read by a statement of its own, because a trigger that
 * waited on a concurrent one's uncommitted insert cannot see that row in its own snapshot.
 *
 * The trigger's params are checked against the declaration of the DAG's current version
 * before anything is written, and the insert pins that same version: if the DAG changed in
 * between, the insert writes nothing and the trigger checks them again against the new one.
 * The notice carries the resolved params (LIMITS.maxRunParamsBytes keeps it inside
 * PostgreSQL's notice size), so the leader needs no read of the run.
 */
export async function triggerRun(db: Db, dagId: string, options: TriggerOptions = {}): Promise<TriggeredRun> {
  const held = heldKeyOf(options, () => requestFingerprintText('triggerRun', dagId, { params: options.params ?? {} }));
  const key = held?.key ?? null;
  const owner = held?.owner ?? '';
  const fingerprint = held === null ? null : storedFingerprint(held);
  // The owner's run under the key, if any; the same key sent with other params is refused here, before anything is written.
  const byKey = async (): Promise<TriggeredRun | null> => {
    if (held === null) return null;
    const row = await firstRow(db, sql`select ${RUN_COLUMNS}, request_fingerprint from runs where dag_id = ${dagId} and request_owner = ${owner} and request_key = ${key}`);
    if (!row) return null;
    checkStoredRequest(held, row.request_fingerprint);
    return { ...runFromRow(row), repeated: true };
  };
  const earlier = await byKey();
  if (earlier) return earlier;
  for (const at of [sql`now()`, sql`clock_timestamp()`, sql`clock_timestamp()`]) {
    const current = await firstRow(
      db,
      sql`select d.current_version, v.spec->'params' as params from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version where d.id = ${dagId}`,
    );
    if (!current) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    const version = Number(current.current_version);
    const params = resolveRunParams((current.params as DagSpec['params'] | null) ?? {}, options.params ?? {});
    const result = await rows(
      db,
      sql`with d as (select id, shard, current_version from dags where id = ${dagId}),
          w as (
            insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state, request_key, request_owner, request_fingerprint, params)
            select id, current_version, shard, ${at}, 'manual', 'queued', ${key}::text, ${owner}, ${fingerprint}::text, ${JSON.stringify(params)}::jsonb from d
            where current_version = ${version}
            on conflict do nothing
            returning ${RUN_COLUMNS}
          ),
          n as (select pg_notify('fenceline', json_build_object('kind', 'run-queued', 'shard', shard, 'runId', id::text, 'dagId', dag_id, 'dagVersion', dag_version, 'scheduledAt', scheduled_at, 'params', params)::text) from w)
          select exists (select 1 from d) as dag_found, (select count(*) from n) as notified, w.*
          from (select 1) as one left join w on true`,
    );
    const row = result[0];
    if (row?.dag_found !== true) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    if (row.id !== null && row.id !== undefined) return runFromRow(row);
    // Nothing inserted: either the slot was taken (retry a microsecond on) or the key was.
    const holder = await byKey();
    if (holder) return holder;
  }
  throw new Error(`could not queue a manual run of ${dagId}: scheduled_at collided three times`);
}

/**
 * The tick's write for many due DAGs, in one statement, for the shards of one or more
 * leaders: the compare-and-set of each DAG's next_run_at (under its group's lead check,
 * whose FOR KEY SHARE lock lasts to commit), and one queued run per slot of each DAG that
 * moved, made from the moved rows themselves. ON CONFLICT DO NOTHING makes a tick that runs twice, or two leaders
 * racing across a failover, create one run per (dag, scheduled_at). Runs pin the DAG's
 * current version. A paused DAG, a DAG outside its group's shard or a moved next_run_at
 * writes nothing for that DAG. The update locks the rows it moves as it walks the input,
 * which is sorted by DAG id; batches that could overlap do not run at once (one leader's
 * batches are disjoint, and two leaders of a shard are serialized by the lead check's
 * lock), and the console's edits lock one DAG row each. No DAG is written before it is
 * due by the store's clock.
 *
 * An item with `start` and one slot whose DAG is still at that version gets its run
 * created running, its jobs inserted from the run row the insert returned (as
 * startRunsAcross does), so a slot's jobs are ready to lease one statement after the slot
 * rather than two.
 */
export async function createScheduledRunsAcross(db: Executor, groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]> {
  for (const item of groups.flatMap((g) => g.items)) {
    if (item.slots.length > LIMITS.maxRunsPerDagPerTick) {
      throw new InvalidInputError(`one tick may create at most ${LIMITS.maxRunsPerDagPerTick} runs of a DAG, got ${item.slots.length} slots`, {
        dagId: item.dagId,
        slots: item.slots.length,
        limit: LIMITS.maxRunsPerDagPerTick,
      });
    }
    if (item.start) checkJobsPerRun([{ dagId: item.dagId, jobs: item.start.jobs }]);
  }
  const tokens = groups.map((g) => g.token);
  const out: CreatedRun[][][] = groups.map((g) => g.items.map(() => []));
  if (groups.length === 0) return [];
  // A DAG named twice is written for its first item only.
  const first = firstOccurrences(groups, (item) => item.dagId);
  // By DAG id: the update below then walks (and so locks) the rows in id order.
  const unique = [...first.values()].sort((a, b) => (a.item.dagId < b.item.dagId ? -1 : a.item.dagId > b.item.dagId ? 1 : 0));
  const slots = unique.flatMap((u) => u.item.slots.map((slot) => ({ dagId: u.item.dagId, slot })));
  // Only a single-slot item starts its run; the version it was planned with travels along.
  const startVersion = unique.map((u) => (u.item.start && u.item.slots.length === 1 ? u.item.start.version : null));
  const payload = jobsPayload(
    'dag_id',
    unique.flatMap((u, k) => (startVersion[k] === null ? [] : [{ key: u.item.dagId, jobs: u.item.start!.jobs }])),
  );
  const result = await rows(
    db,
    sql`with ${leadManyCte(tokens)},
        i as (
          select * from unnest(${array(
            unique.map((u) => u.item.dagId),
            'text',
          )}, ${array(
            unique.map((u) => u.item.expectedNextRunAt.toISOString()),
            'text',
          )}::timestamptz[],
            ${array(
              unique.map((u) => u.item.nextRunAt?.toISOString() ?? null),
              'text',
            )}::timestamptz[], ${array(
              unique.map((u) => u.g + 1),
              'int',
            )},
            ${array(startVersion, 'int')},
            ${array(
              unique.map((u) => JSON.stringify(u.item.params ?? {})),
              'text',
            )}::jsonb[])
            as i(dag_id, expected, next_run_at, g, start_version, params)
        ),
        -- Never before its slot: the due check is on the input's expected next_run_at (equal
        -- to the row's), since on the row's column it would tempt the planner into a range
        -- scan of the next_run_at index joined to the input by a filter, 200 ms for 500 DAGs.
        -- The update locks each row it moves itself, re-checking the conditions on the row's
        -- latest version if another transaction changed it meanwhile.
        moved as (
          update dags d set next_run_at = i.next_run_at
          from i join lead on lead.g = i.g
          where d.id = i.dag_id and d.shard = lead.shard and not d.paused and d.next_run_at = i.expected and i.expected <= now()
          returning d.id, d.current_version, d.shard, coalesce(d.current_version = i.start_version, false) as start, i.params
        ),
        s as (select * from unnest(${array(
          slots.map((p) => p.dagId),
          'text',
        )}, ${array(
          slots.map((p) => p.slot.toISOString()),
          'timestamptz',
        )}) as s(dag_id, slot)),
        w as (
          insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state, started_at, params)
          select m.id, m.current_version, m.shard, s.slot, 'schedule',
            case when m.start then 'running' else 'queued' end, case when m.start then now() end, m.params
          from moved m join s on s.dag_id = m.id
          on conflict (dag_id, scheduled_at) do nothing
          returning ${RUN_COLUMNS}
        ),
        j as (${insertJobs(sql`w`, payload, 'dag_id', sql`where r.state = 'running'`)}),
        -- Materialized: the planner guesses one row for every CTE above and joins jr to w by
        -- nested loop, and an inlined jr re-sorted and re-aggregated every job once per run
        -- (250 runs took 100 to 137 ms, 300 took 20; docs/history.md, "Change: the tick's
        -- creation statement aggregates its jobs once").
        jr as materialized (select run_id, json_agg(j order by j.id) as jobs from j group by run_id)
        select (select coalesce(array_agg(g), '{}') from lead) as led, w.*, jr.jobs
        from (select 1) as one left join w on true left join jr on jr.run_id = w.id`,
  );
  for (const row of result) {
    if (row.id === null || row.id === undefined) continue;
    const run: CreatedRun = runFromRow(row);
    if (run.state === 'running') run.jobs = ((row.jobs as Record<string, unknown>[] | null) ?? []).map(jobFromRow);
    const at = first.get(run.dagId)!;
    out[at.g]![at.i]!.push(run);
  }
  for (const list of out.flat()) list.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
  return perGroup(tokens, ledGroups(result), 'createScheduledRuns', (g) => out[g]!);
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
 * queued -> running for many runs, and every job of each inserted, in one statement for
 * the shards of one or more leaders: the jobs are inserted from the run rows the update
 * returned, so a run that was not queued, lies outside its group's shard or whose group
 * failed its lead check inserts no job either. The job lists travel as one json
 * parameter (jobsPayload).
 */
export async function startRunsAcross(db: Executor, groups: LeaderGroup<{ runId: string; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]> {
  checkJobsPerRun(groups.flatMap((g) => g.items));
  if (groups.length === 0) return [];
  const tokens = groups.map((g) => g.token);
  const out: JobRow[][][] = groups.map((g) => g.items.map(() => []));
  // A run named twice starts once, for its first item.
  const first = firstOccurrences(groups, (item) => item.runId, isId);
  const payload = jobsPayload(
    'run_id',
    [...first].map(([runId, { item }]) => ({ key: runId, jobs: item.jobs })),
  );
  const result = await rows(
    db,
    sql`with ${leadManyCte(tokens)},
        r as (select * from unnest(${array([...first.keys()], 'bigint')}, ${array(
          [...first.values()].map((f) => f.g + 1),
          'int',
        )}) as r(id, g)),
        started as (
          update runs u set state = 'running', started_at = now()
          from r join lead on lead.g = r.g
          where u.id = r.id and u.shard = lead.shard and u.state = 'queued'
          returning u.id, u.dag_id, u.shard
        ),
        w as (${insertJobs(sql`started`, payload, 'run_id')})
        ${selectWithLeadMany()} order by w.id`,
  );
  for (const row of result) {
    if (row.id === null || row.id === undefined) continue;
    const job = jobFromRow(row);
    const at = first.get(job.runId)!;
    out[at.g]![at.i]!.push(job);
  }
  return perGroup(tokens, ledGroups(result), 'startRun', (g) => out[g]!);
}

/**
 * running -> succeeded | failed for many runs of one or more leaders' shards; per item
 * whether it moved (a run named twice moves once, for its first item).
 */
export async function finishRunsAcross(
  db: Executor,
  groups: LeaderGroup<{ runId: string; state: 'succeeded' | 'failed' | 'cancelled' }>[],
): Promise<(boolean[] | DeposedLeaderError)[]> {
  if (groups.length === 0) return [];
  const tokens = groups.map((g) => g.token);
  const first = firstOccurrences(groups, (item) => item.runId, isId);
  const unique = [...first];
  const result = await rows(
    db,
    sql`with ${leadManyCte(tokens)},
        i as (select * from unnest(${array(
          unique.map(([id]) => id),
          'bigint',
        )}, ${array(
          unique.map(([, u]) => u.item.state),
          'text',
        )},
          ${array(
            unique.map(([, u]) => u.g + 1),
            'int',
          )}) as i(run_id, state, g)),
        w as (
          update runs r set state = i.state, ended_at = now()
          from i join lead on lead.g = i.g
          where r.id = i.run_id and r.shard = lead.shard
            and (r.state = 'running' or (r.state = 'queued' and i.state = 'failed'))
            -- A run with a job still open does not end: an operator's clear may have
            -- reopened it while the finish was on its way.
            and not exists (select 1 from jobs j where j.run_id = r.id and j.state in ('waiting', 'ready', 'leased'))
          returning r.id
        )
        ${selectWithLeadMany()}`,
  );
  const moved = new Set(result.filter((r) => r.id !== null && r.id !== undefined).map((r) => toId(r.id)));
  return perGroup(tokens, ledGroups(result), 'finishRun', (g) =>
    groups[g]!.items.map((item, i) => {
      const at = first.get(item.runId);
      return at !== undefined && at.g === g && at.i === i && moved.has(item.runId);
    }),
  );
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
  const result = await rows(db, sql`select ${RUN_COLUMNS} from runs where ${sql.join(conditions, sql` and `)} order by id desc limit ${limit}`);
  return result.map(runFromRow);
}
