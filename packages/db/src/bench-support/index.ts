import { sql } from 'drizzle-orm';
import { canonicalJson, shardOf } from '@fenceline/core';
import { type LeaderToken } from '@fenceline/core/store';
import { dueDagsQuery } from '../store/tick';
import { array, msInterval, rows, type Executor } from '../store/db';
import { toDate, toId, toNumber } from '../store/rows';

/**
 * SQL used only by the benchmark harness (bench/), exported as @fenceline/db/bench-support.
 * It lives here rather than in bench/ because every SQL statement of the repository's own
 * store lives in packages/db (test/architecture.test.ts checks it); nothing in the product
 * imports it.
 *
 * The "store ceiling" statements are the production lease and fenced completion with the
 * scheduler taken away: the same conditions (state, backoff, fence, holder, liveness by the
 * store's clock, highest-fence upsert in the result store), so the ceiling is what the
 * store itself can do for the work the scheduler asks of it.
 */

const DAY_MS = 86_400_000;

function taskSpec(id: string, type: string, dependsOn: string[] = []) {
  return { id, type, config: {}, dependsOn, retries: 0, retryBackoffMs: 5000, retryBackoffMaxMs: 300000, timeoutMs: 3600000, priority: 0 };
}

/** A normalised spec, as putDag would store it, without running the validator per DAG. */
export function benchSpec(
  id: string,
  opts: { tasks: { id: string; type: string; dependsOn?: string[] }[]; schedule?: Record<string, unknown>; catchup?: 'none' | 'latest' | 'all' },
) {
  return {
    id,
    name: `bench ${id}`,
    schedule: opts.schedule ?? { kind: 'manual' },
    catchup: { policy: opts.catchup ?? 'latest', windowMs: DAY_MS },
    maxActiveRuns: 1,
    paused: false,
    tasks: opts.tasks.map((t) => taskSpec(t.id, t.type, t.dependsOn ?? [])),
  };
}

/**
 * Bulk-inserts DAG heads and their version 1, 10,000 per statement. `nextRunAt` is null
 * for manual DAGs. Far faster than putDag one by one, which validates and versions each.
 */
export async function seedBenchDags(db: Executor, dags: { id: string; spec: ReturnType<typeof benchSpec>; nextRunAt: Date | null }[], shardCount: number): Promise<void> {
  const batch = 10_000;
  for (let start = 0; start < dags.length; start += batch) {
    const part = dags.slice(start, start + batch);
    await rows(
      db,
      sql`with input as (
            select * from unnest(${array(
              part.map((d) => d.id),
              'text',
            )}, ${array(
              part.map((d) => shardOf(d.id, shardCount)),
              'int',
            )},
              ${array(
                part.map((d) => canonicalJson(d.spec)),
                'text',
              )}, ${array(
                part.map((d) => d.nextRunAt?.toISOString() ?? null),
                'timestamptz',
              )})
              as t(id, shard, spec, next_run_at)
          ), heads as (
            insert into dags (id, shard, current_version, paused, next_run_at)
            select id, shard, 1, false, next_run_at from input on conflict (id) do nothing returning id
          )
          insert into dag_versions (dag_id, version, spec)
          select i.id, 1, i.spec::jsonb from input i join heads h on h.id = i.id`,
    );
  }
  await rows(db, sql`analyze dags`);
  await rows(db, sql`analyze dag_versions`);
}

/**
 * Queues one manual run per DAG in one statement and notifies each shard's leader per run,
 * as triggerRun does one at a time. Returns the store time of the insert.
 */
export async function triggerBenchRuns(db: Executor, dagIds: string[]): Promise<Date> {
  const result = await rows(
    db,
    sql`with w as (
          insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state)
          select d.id, d.current_version, d.shard, clock_timestamp(), 'manual', 'queued'
          from dags d where d.id = any(${array(dagIds, 'text')})
          returning id, shard, dag_id, dag_version, scheduled_at, params
        ),
        n as (select pg_notify('fenceline', json_build_object('kind', 'run-queued', 'shard', shard, 'runId', id::text, 'dagId', dag_id, 'dagVersion', dag_version, 'scheduledAt', scheduled_at, 'params', params)::text) from w)
        select now() as now, (select count(*) from n) as notified`,
  );
  return toDate(result[0]?.now);
}

/** Moves next_run_at of the given DAGs to the given (past) slots, so the next tick finds them due. */
export async function makeDue(db: Executor, dagIds: string[], slots: Date[]): Promise<Date> {
  const result = await rows(
    db,
    sql`with w as (
          update dags d set next_run_at = t.slot
          from unnest(${array(dagIds, 'text')}, ${array(
            slots.map((s) => s.toISOString()),
            'timestamptz',
          )}) as t(id, slot)
          where d.id = t.id returning d.id
        )
        select clock_timestamp() as now, (select count(*) from w) as moved`,
  );
  return toDate(result[0]?.now);
}

/** The store's clock. */
export async function storeNow(db: Executor): Promise<Date> {
  return toDate((await rows(db, sql`select clock_timestamp() as now`))[0]?.now);
}

/**
 * When the runs of these DAGs were created and started (store time), for the tick's
 * run-creation span: `started` counts the runs whose jobs were inserted.
 */
export async function runCreationSpan(
  db: Executor,
  dagIds: string[],
  after: Date,
): Promise<{ count: number; first: Date | null; last: Date | null; started: number; lastStarted: Date | null }> {
  const r = (
    await rows(
      db,
      sql`select count(*) as n, min(created_at) as first, max(created_at) as last, count(started_at) as started, max(started_at) as last_started from runs
          where dag_id = any(${array(dagIds, 'text')}) and created_at >= ${after.toISOString()}::timestamptz`,
    )
  )[0];
  const at = (v: unknown): Date | null => (v ? toDate(v) : null);
  return { count: toNumber(r?.n ?? 0), first: at(r?.first), last: at(r?.last), started: toNumber(r?.started ?? 0), lastStarted: at(r?.last_started) };
}

// ---- store ceiling ----------------------------------------------------------------------

/** A running run with `count` ready jobs in `shard`, for the ceiling case. Returns the job ids. */
export async function seedReadyJobs(db: Executor, opts: { dagId: string; shard: number; count: number }): Promise<string[]> {
  await rows(
    db,
    sql`with d as (insert into dags (id, shard, current_version, paused, next_run_at) values (${opts.dagId}, ${opts.shard}, 1, false, null) returning id)
        insert into dag_versions (dag_id, version, spec) select id, 1, ${canonicalJson(benchSpec(opts.dagId, { tasks: [{ id: 't', type: 'noop' }] }))}::jsonb from d`,
  );
  const result = await rows(
    db,
    sql`with r as (
          insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state, started_at)
          values (${opts.dagId}, 1, ${opts.shard}, now(), 'manual', 'running', now()) returning id
        )
        insert into jobs (run_id, dag_id, shard, task_id, state, max_attempts, priority, retry_backoff_ms, retry_backoff_max_ms, timeout_ms, ready_at)
        select r.id, ${opts.dagId}, ${opts.shard}, 't' || g, 'ready', 1, 0, 0, 0, 3600000, now()
        from r cross join generate_series(1, ${opts.count}) g
        returning id`,
  );
  await rows(db, sql`analyze jobs`);
  return result.map((r) => toId(r.id));
}

/**
 * The conditional lease for a batch: ready -> leased only if still ready and past its
 * backoff, fence + 1, holder and expiry from the store's clock, row locks in id order.
 * Returns each leased job's new fence.
 */
export async function ceilingLease(db: Executor, jobIds: string[], workerId: string, ttlMs: number): Promise<{ jobId: string; fence: number }[]> {
  const result = await rows(
    db,
    sql`with locked as materialized (
          select id from jobs where id = any(${array(jobIds, 'bigint')}) and state = 'ready'
            and (next_attempt_at is null or next_attempt_at <= now())
          order by id for update
        )
        update jobs j set state = 'leased', fence = j.fence + 1, attempt = j.attempt + 1, holder = ${workerId},
          lease_expires_at = now() + ${msInterval(ttlMs)}, leased_at = now(), next_attempt_at = null
        from locked where j.id = locked.id
        returning j.id, j.fence`,
  );
  return result.map((r) => ({ jobId: toId(r.id), fence: toNumber(r.fence) }));
}

/**
 * The fenced completion for a batch: leased -> succeeded only where fence and holder match
 * and the lease is live, with the result written under the same fence (highest fence wins)
 * and the attempt's row added, as completeJobs does. Returns how many landed.
 */
export async function ceilingComplete(db: Executor, leases: { jobId: string; fence: number }[], workerId: string): Promise<number> {
  const result = await rows(
    db,
    sql`with r as (
          select * from unnest(${array(
            leases.map((l) => l.jobId),
            'bigint',
          )}, ${array(
            leases.map((l) => l.fence),
            'bigint',
          )}) as r(job_id, fence)
        ),
        w as (
          update jobs j set state = 'succeeded', ended_at = now(), lease_expires_at = null
          from r
          where j.id = r.job_id and j.fence = r.fence and j.holder = ${workerId} and j.state = 'leased' and j.lease_expires_at > now()
            and not exists (select 1 from results x where x.job_id = r.job_id and x.fence >= r.fence)
          returning j.id, j.fence, j.holder, j.attempt, j.leased_at
        ),
        res as (
          insert into results (job_id, fence, worker_id, outcome, output, error, logs, written_at)
          select id, fence, holder, 'succeeded', 'null'::jsonb, null, null, now() from w
          on conflict (job_id) do update set fence = excluded.fence, worker_id = excluded.worker_id, outcome = excluded.outcome,
            output = excluded.output, written_at = excluded.written_at
          where results.fence < excluded.fence
          returning job_id
        ),
        att as (
          insert into job_attempts (job_id, fence, attempt, worker_id, outcome, output, error, logs, started_at, ended_at)
          select w.id, w.fence, w.attempt, w.holder, 'succeeded', 'null'::jsonb, null, null, w.leased_at, now() from w
          on conflict (job_id, fence) do nothing
        )
        select count(*) as n from res`,
  );
  return toNumber(result[0]?.n ?? 0);
}

// ---- end to end -------------------------------------------------------------------------

export interface LatencyFigures {
  jobs: number;
  firstReadyAt: Date | null;
  lastWrittenAt: Date | null;
  p50Ms: number | null;
  p99Ms: number | null;
  maxMs: number | null;
  /** Medians of the legs: ready -> leased (store), leased -> started (delivery), started -> result written. */
  legsP50Ms: { lease: number | null; deliver: number | null; write: number | null };
  legsP99Ms: { lease: number | null; deliver: number | null };
}

/** Ready (store time) to started on the worker (`output.startedAtMs`), in ms, of a job `j` and its result `x`. */
const DISPATCH_MS = sql`(x.output->>'startedAtMs')::float8 - extract(epoch from j.ready_at) * 1000`;

/** The succeeded jobs of the runs after `runIdsAfter`, with their results, as `j` and `x`. */
function finishedJobsAfter(runIdsAfter: string) {
  return sql`from jobs j join results x on x.job_id = j.id where j.run_id > ${runIdsAfter}::bigint and x.outcome = 'succeeded'`;
}

/**
 * Dispatch latency of finished jobs whose worker recorded when it started them
 * (`output.startedAtMs`, the worker's wall clock on the same machine as the store):
 * from ready (store time) to started on a worker.
 */
export async function dispatchLatency(db: Executor, runIdsAfter: string): Promise<LatencyFigures> {
  const r = (
    await rows(
      db,
      sql`with l as (
            select j.ready_at, x.written_at, ${DISPATCH_MS} as ms,
              extract(epoch from j.leased_at - j.ready_at) * 1000 as lease_ms,
              (x.output->>'startedAtMs')::float8 - extract(epoch from j.leased_at) * 1000 as deliver_ms,
              extract(epoch from x.written_at) * 1000 - (x.output->>'startedAtMs')::float8 as write_ms
            ${finishedJobsAfter(runIdsAfter)}
          )
          select count(*) as n, min(ready_at) as first, max(written_at) as last,
            percentile_cont(0.5) within group (order by ms) as p50,
            percentile_cont(0.99) within group (order by ms) as p99, max(ms) as mx,
            percentile_cont(0.5) within group (order by lease_ms) as lease_p50,
            percentile_cont(0.5) within group (order by deliver_ms) as deliver_p50,
            percentile_cont(0.5) within group (order by write_ms) as write_p50,
            percentile_cont(0.99) within group (order by lease_ms) as lease_p99,
            percentile_cont(0.99) within group (order by deliver_ms) as deliver_p99
          from l`,
    )
  )[0];
  const num = (v: unknown): number | null => (v == null ? null : Number(v));
  return {
    jobs: toNumber(r?.n ?? 0),
    firstReadyAt: r?.first ? toDate(r.first) : null,
    lastWrittenAt: r?.last ? toDate(r.last) : null,
    p50Ms: num(r?.p50),
    p99Ms: num(r?.p99),
    maxMs: num(r?.mx),
    legsP50Ms: { lease: num(r?.lease_p50), deliver: num(r?.deliver_p50), write: num(r?.write_p50) },
    legsP99Ms: { lease: num(r?.lease_p99), deliver: num(r?.deliver_p99) },
  };
}

/**
 * Dispatch latency (as dispatchLatency measures it) per whole second since the first job
 * of the phase became ready, so a tail can be placed: at the start of a phase, after a
 * burst, or spread evenly.
 */
export async function dispatchLatencyBySecond(db: Executor, runIdsAfter: string): Promise<{ second: number; jobs: number; p50Ms: number; p99Ms: number; maxMs: number }[]> {
  const result = await rows(
    db,
    sql`with l as (select j.ready_at, ${DISPATCH_MS} as ms ${finishedJobsAfter(runIdsAfter)}),
        b as (select floor(extract(epoch from ready_at - min(ready_at) over ())) as second, ms from l)
        select second, count(*) as n, percentile_cont(0.5) within group (order by ms) as p50,
          percentile_cont(0.99) within group (order by ms) as p99, max(ms) as mx
        from b group by second order by second`,
  );
  return result.map((r) => ({ second: toNumber(r.second), jobs: toNumber(r.n), p50Ms: Number(r.p50), p99Ms: Number(r.p99), maxMs: Number(r.mx) }));
}

/**
 * Commits one one-row insert every `everyMs` on `db` (give it a connection of its own, or
 * it measures waiting for the pool) until `stop()`, which returns each commit's round
 * trip in ms. With synchronous_commit on each one waits for its WAL flush, so the figures
 * are the floor under any write the scheduler makes at that moment: what a dispatch (two
 * commits) cannot go below, whatever the scheduler does.
 */
export async function commitProbe(db: Executor, everyMs = 5): Promise<{ stop: () => Promise<number[]> }> {
  await rows(db, sql`create table if not exists bench_commit_probe (id bigserial primary key, at timestamptz not null default now())`);
  const times: number[] = [];
  let stopping = false;
  const loop = (async () => {
    while (!stopping) {
      const t = performance.now();
      await rows(db, sql`insert into bench_commit_probe default values`);
      times.push(performance.now() - t);
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return {
    stop: async () => {
      stopping = true;
      await loop;
      await rows(db, sql`drop table if exists bench_commit_probe`);
      return times;
    },
  };
}

/** Runs created after `runIdsAfter` by state, to tell when a batch of runs has finished. */
export async function runStates(db: Executor, runIdsAfter: string): Promise<Record<string, number>> {
  const result = await rows(db, sql`select state, count(*) as n from runs where id > ${runIdsAfter}::bigint group by state`);
  return Object.fromEntries(result.map((r) => [String(r.state), toNumber(r.n)]));
}

/** The highest run id so far, so a phase can count only its own runs. */
export async function maxRunId(db: Executor): Promise<string> {
  const r = (await rows(db, sql`select coalesce(max(id), 0) as id from runs`))[0];
  return toId(r?.id ?? 0);
}

/** Jobs that ran more than once (a lease granted twice would show here). */
export async function jobsRunTwice(db: Executor, runIdsAfter: string): Promise<number> {
  const r = (await rows(db, sql`select count(*) as n from jobs where run_id > ${runIdsAfter}::bigint and attempt > 1`))[0];
  return toNumber(r?.n ?? 0);
}

// ---- store-side cost ------------------------------------------------------------------

/** Committed and rolled-back transactions of this database so far (every autocommit statement is one). */
export async function transactionCount(db: Executor): Promise<number> {
  const r = (await rows(db, sql`select pg_stat_force_next_flush(), (select xact_commit + xact_rollback from pg_stat_database where datname = current_database()) as n`))[0];
  return toNumber(r?.n ?? 0);
}

/** Row writes (inserts and updates) to the workers table so far, as the statistics collector has them. */
export async function workerRowWrites(db: Executor): Promise<number> {
  const r = (await rows(db, sql`select pg_stat_force_next_flush(), (select n_tup_ins + n_tup_upd from pg_stat_user_tables where relname = 'workers') as n`))[0];
  return toNumber(r?.n ?? 0);
}

/** Backends connected to this database (for their CPU from /proc) and how many are running a statement now. */
export async function backends(db: Executor): Promise<{ pids: number[]; active: number }> {
  const result = await rows(db, sql`select pid, state from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()`);
  return { pids: result.map((r) => toNumber(r.pid)), active: result.filter((r) => r.state === 'active').length };
}

export async function serverVersion(db: Executor): Promise<string> {
  const r = (await rows(db, sql`select current_setting('server_version') as v, current_setting('synchronous_commit') as s`))[0];
  return `${String(r?.v)} (synchronous_commit=${String(r?.s)})`;
}

/**
 * EXPLAIN (ANALYZE, BUFFERS) of the due query exactly as the scheduler sends it, under the
 * given tokens, for the report (a hand-written copy had planned differently: a parallel
 * sequential scan where production walks the due index shard by shard).
 */
export async function explainDue(db: Executor, tokens: LeaderToken[], limit: number): Promise<string> {
  const result = await rows(db, sql`explain (analyze, buffers, costs off) ${dueDagsQuery(tokens, limit)}`);
  return result.map((r) => String(r['QUERY PLAN'])).join('\n');
}
