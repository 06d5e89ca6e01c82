import { connect } from './client';

/**
 * Read-only checks of the store's own records against the invariants of docs/architecture.md, for
 * the live chaos soak and tests. They read what the store kept (jobs, runs, results) and
 * what the event log adds; a lost event can hide a violation but never invent one.
 */
export interface AuditReport {
  /** I4: (dag, scheduled_at) pairs with more than one run. */
  duplicateRuns: { dagId: string; scheduledAt: string; runs: number }[];
  /** I3: accepted results whose fence or worker is not the job's final lease. */
  resultsFromRevokedHolders: { jobId: string; resultFence: number; jobFence: number; resultWorker: string; jobHolder: string | null }[];
  /**
   * I3: jobs with more than one accepted completion in the event log. As with reusedFences,
   * an event batch written again whole after its acknowledgement was lost repeats the same
   * completion, so only completions under different fences, times or workers count.
   */
  doubleAccepted: { jobId: string; accepted: number }[];
  /**
   * I2: fences granted more than once for one job, by the event log (a store that lost
   * acknowledged writes would re-issue them). An event batch whose acknowledgement was lost
   * is written again whole, so only grants of one fence at different times or to different
   * workers count.
   */
  reusedFences: { jobId: string; fence: number; grants: number }[];
  /** Jobs that ended succeeded with no accepted result kept: an acknowledged result lost. */
  succeededWithoutResult: string[];
  succeededJobs: number;
  /** I7: jobs and runs not in a terminal state. */
  nonTerminalJobs: number;
  nonTerminalRuns: number;
  /** I5: for interval DAGs, gaps between consecutive scheduled runs larger than the interval. */
  missedSlots: { dagId: string; after: string; gapMs: number; everyMs: number }[];
  refusalsByReason: Record<string, number>;
  faultEvents: Record<string, number>;
}

export async function auditStore(databaseUrl: string): Promise<AuditReport> {
  const sql = connect(databaseUrl, { max: 1 });
  try {
    const duplicateRuns = await sql<{ dag_id: string; scheduled_at: Date; n: string }[]>`
      select dag_id, scheduled_at, count(*) as n from runs group by dag_id, scheduled_at having count(*) > 1`;
    const revoked = await sql<{ job_id: string; rf: string; jf: string; rw: string; holder: string | null }[]>`
      select r.job_id, r.fence as rf, j.fence as jf, r.worker_id as rw, j.holder
      from results r join jobs j on j.id = r.job_id
      where r.outcome = 'succeeded' and (r.fence <> j.fence or r.worker_id is distinct from j.holder or j.state <> 'succeeded')`;
    const doubles = await sql<{ job_id: string; n: string }[]>`
      select job_id, count(distinct (fence, at, worker_id)) as n from events where type = 'job:succeeded'
      group by job_id having count(distinct (fence, at, worker_id)) > 1`;
    const reused = await sql<{ job_id: string; fence: string; n: string }[]>`
      select job_id, fence, count(distinct (at, worker_id)) as n from events where type = 'lease:granted'
      group by job_id, fence having count(distinct (at, worker_id)) > 1`;
    const resultless = await sql<{ id: string }[]>`
      select j.id from jobs j where j.state = 'succeeded'
      and not exists (select 1 from results r where r.job_id = j.id and r.outcome = 'succeeded')`;
    const [succeeded] = await sql<{ n: string }[]>`select count(*) as n from jobs where state = 'succeeded'`;
    const [jobs] = await sql<{ n: string }[]>`
      select count(*) as n from jobs where state not in ('succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled')`;
    const [runs] = await sql<{ n: string }[]>`
      select count(*) as n from runs where state not in ('succeeded', 'failed', 'cancelled')`;
    const gaps = await sql<{ dag_id: string; prev: Date; gap_ms: string; every_ms: string }[]>`
      with interval_dags as (
        select d.id, (v.spec->'schedule'->>'everyMs')::bigint as every_ms
        from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version
        where v.spec->'schedule'->>'kind' = 'interval'
      ),
      ordered as (
        select r.dag_id, r.scheduled_at, i.every_ms,
          lag(r.scheduled_at) over (partition by r.dag_id order by r.scheduled_at) as prev
        from runs r join interval_dags i on i.id = r.dag_id
        where r.trigger = 'schedule'
      )
      select dag_id, prev, extract(epoch from scheduled_at - prev) * 1000 as gap_ms, every_ms
      from ordered where prev is not null and extract(epoch from scheduled_at - prev) * 1000 > every_ms`;
    const refusals = await sql<{ reason: string; n: string }[]>`
      select data->>'reason' as reason, count(*) as n from events where type = 'write:fenced' group by 1`;
    const kinds = await sql<{ type: string; n: string }[]>`
      select type, count(*) as n from events
      where type in ('leader:elected', 'leader:deposed', 'leader:released', 'lease:expired', 'lease:released', 'job:retrying', 'job:failed')
      group by type`;
    return {
      duplicateRuns: duplicateRuns.map((r) => ({ dagId: r.dag_id, scheduledAt: new Date(r.scheduled_at).toISOString(), runs: Number(r.n) })),
      resultsFromRevokedHolders: revoked.map((r) => ({ jobId: String(r.job_id), resultFence: Number(r.rf), jobFence: Number(r.jf), resultWorker: r.rw, jobHolder: r.holder })),
      doubleAccepted: doubles.map((r) => ({ jobId: String(r.job_id), accepted: Number(r.n) })),
      reusedFences: reused.map((r) => ({ jobId: String(r.job_id), fence: Number(r.fence), grants: Number(r.n) })),
      succeededWithoutResult: resultless.map((r) => String(r.id)),
      succeededJobs: Number(succeeded?.n ?? 0),
      nonTerminalJobs: Number(jobs?.n ?? 0),
      nonTerminalRuns: Number(runs?.n ?? 0),
      missedSlots: gaps.map((g) => ({ dagId: g.dag_id, after: new Date(g.prev).toISOString(), gapMs: Number(g.gap_ms), everyMs: Number(g.every_ms) })),
      refusalsByReason: Object.fromEntries(refusals.map((r) => [r.reason ?? 'unknown', Number(r.n)])),
      faultEvents: Object.fromEntries(kinds.map((k) => [k.type, Number(k.n)])),
    };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** Leases held right now per DAG, and the slots of workers seen recently: the fair-share sample. */
export async function sampleShares(databaseUrl: string, liveWithinMs: number): Promise<{ held: Map<string, number>; poolSlots: number }> {
  const sql = connect(databaseUrl, { max: 1 });
  try {
    const held = await sql<{ dag_id: string; n: string }[]>`select dag_id, count(*) as n from jobs where state = 'leased' group by dag_id`;
    const [pool] = await sql<{ slots: string | null }[]>`
      select sum(slots) as slots from workers where last_seen > now() - (${liveWithinMs}::float8 * interval '1 millisecond')`;
    return { held: new Map(held.map((h) => [h.dag_id, Number(h.n)])), poolSlots: Number(pool?.slots ?? 0) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * Makes every insert into notification_channels fail inside PostgreSQL, as a store failing
 * underneath would, until the returned `undo` runs: the drills' way to put a store error
 * on the channel path without touching the code under test.
 */
export async function refuseChannelInserts(databaseUrl: string): Promise<{ undo: () => Promise<void> }> {
  const sql = connect(databaseUrl, { max: 1 });
  try {
    await sql.unsafe(`create or replace function fenceline_test_refuse() returns trigger language plpgsql as $$ begin raise exception 'the channel table is failing'; end $$`);
    await sql.unsafe(`create trigger fenceline_test_refuse before insert on notification_channels for each row execute function fenceline_test_refuse()`);
  } finally {
    await sql.end({ timeout: 5 });
  }
  return {
    undo: async () => {
      const undo = connect(databaseUrl, { max: 1 });
      try {
        await undo.unsafe(`drop trigger fenceline_test_refuse on notification_channels`);
      } finally {
        await undo.end({ timeout: 5 });
      }
    },
  };
}

/**
 * Cuts every connection to one database, as a PostgreSQL restart would, except the
 * caller's own: every process must reconnect and carry on.
 */
export async function terminateBackends(adminUrl: string, databaseName: string): Promise<number> {
  const sql = connect(adminUrl, { max: 1 });
  try {
    const rows = await sql<{ ok: boolean }[]>`
      select pg_terminate_backend(pid) as ok from pg_stat_activity
      where datname = ${databaseName} and pid <> pg_backend_pid()`;
    return rows.filter((r) => r.ok).length;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** How many jobs have succeeded and how many have not ended yet, for drills that wait on a workload. */
export async function jobProgress(databaseUrl: string): Promise<{ succeeded: number; unfinished: number }> {
  const sql = connect(databaseUrl, { max: 1, connect_timeout: 5 });
  try {
    const [row] = await sql<{ succeeded: string; unfinished: string }[]>`
      select count(*) filter (where state = 'succeeded') as succeeded,
        count(*) filter (where state not in ('succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled')) as unfinished
      from jobs`;
    return { succeeded: Number(row?.succeeded ?? 0), unfinished: Number(row?.unfinished ?? 0) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * The store time of the first lease granted after `at` that the store still records: each
 * job's latest grant time, as the store's own clock wrote it (an event's time is a node's
 * estimate of that clock, which can be off by the skew of the estimate).
 */
export async function firstLeaseGrantedAfter(databaseUrl: string, at: Date): Promise<Date | null> {
  const sql = connect(databaseUrl, { max: 1, connect_timeout: 5 });
  try {
    const [row] = await sql<{ first: Date | null }[]>`select min(leased_at) as first from jobs where leased_at > ${at}`;
    return row?.first ? new Date(row.first) : null;
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** How many times the store raised its fences for a new PostgreSQL timeline (store/lineage.ts). */
export async function timelineFencings(databaseUrl: string): Promise<number> {
  const sql = connect(databaseUrl, { max: 1, connect_timeout: 5 });
  try {
    const [row] = await sql<{ fencings: string | null }[]>`select fencings from store_lineage where id = 1`;
    return Number(row?.fencings ?? 0);
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/** How many of one run's jobs have succeeded and how many have not ended yet. */
export async function runProgress(databaseUrl: string, runId: string): Promise<{ succeeded: number; unfinished: number }> {
  const sql = connect(databaseUrl, { max: 1, connect_timeout: 5 });
  try {
    const [row] = await sql<{ succeeded: string; unfinished: string }[]>`
      select count(*) filter (where state = 'succeeded') as succeeded,
        count(*) filter (where state not in ('succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled')) as unfinished
      from jobs where run_id = ${runId}`;
    return { succeeded: Number(row?.succeeded ?? 0), unfinished: Number(row?.unfinished ?? 0) };
  } finally {
    await sql.end({ timeout: 5 });
  }
}

/**
 * What every session of the store's database is doing, for a drill that found the cluster
 * stuck: which node, its state, what it waits on and the start of its statement.
 */
export async function storeActivity(databaseUrl: string): Promise<{ app: string; state: string | null; wait: string | null; query: string }[]> {
  const sql = connect(databaseUrl, { max: 1, connect_timeout: 5 });
  try {
    const rows = await sql<{ app: string; state: string | null; wait: string | null; query: string | null }[]>`
      select application_name as app, state, wait_event_type || ':' || wait_event as wait, left(query, 80) as query
      from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() order by application_name`;
    return rows.map((r) => ({ app: r.app, state: r.state, wait: r.wait, query: r.query ?? '' }));
  } finally {
    await sql.end({ timeout: 5 });
  }
}
