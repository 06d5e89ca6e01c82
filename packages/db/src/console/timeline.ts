import { sql } from 'drizzle-orm';
import type { DagSpec, JobRow, RunRow } from '@fenceline/core';
import { getDagVersion } from '../store/dags';
import { listJobs } from '../store/jobs';
import { getRun } from '../store/runs';
import { capOf, poolSnapshot } from './pool';
import { date, num, numOrNull, query, strOrNull, type ConsoleDb } from './sql';

/** One lease of a job, from its grant to whatever ended it. */
export interface Attempt {
  attempt: number;
  fence: number;
  workerId: string | null;
  grantedAt: Date;
  /** Null while the lease is live. */
  endedAt: Date | null;
  /** succeeded, failed, retrying, expired (swept; the holder was fenced), released, or live. */
  outcome: string;
  error: string | null;
  /** For a live lease: when it runs out unless renewed (renewals push this forward). */
  leaseExpiresAt: Date | null;
  /** When the holder renewed this lease. */
  renewals: Date[];
}

export interface JobTimeline {
  job: JobRow;
  attempts: Attempt[];
  /** Why the job is not running now, in words, for jobs that are neither leased nor finished. */
  waitingReason: string | null;
  dependsOn: string[];
}

export interface RunTimeline {
  now: Date;
  run: RunRow;
  spec: DagSpec;
  jobs: JobTimeline[];
  /** Fenced writes refused for this run's jobs. */
  fencedWrites: { at: Date; jobId: string | null; workerId: string | null; fence: number | null; reason: string | null }[];
}

const ENDS: Record<string, string> = {
  'job:succeeded': 'succeeded',
  'job:failed': 'failed',
  'job:retrying': 'retrying',
  'lease:expired': 'expired',
  'lease:released': 'released',
};

/**
 * The run with every job and every attempt. Attempts come from the event log (by the run
 * index): a `lease:granted` opens one with its fence, and the first end event of that job
 * at or after it closes it. The reason a waiting job waits is worked out from the same facts
 * the leader uses: dependencies, backoff, the DAG's cap against the pool, free slots.
 */
export async function runTimeline(db: ConsoleDb, runId: string, opts: { capFraction: number; liveWindowMs: number }): Promise<RunTimeline> {
  const run = await getRun(db, runId);
  const [version, jobs, events, pool] = await Promise.all([
    getDagVersion(db, run.dagId, run.dagVersion),
    listJobs(db, runId),
    // Renewal events carry the job but not the run (the renewing node may not lead it), so they are found by job.
    query(
      db,
      sql`select id, at, type, job_id, worker_id, fence, data from events
          where run_id = ${runId}
             or (type = 'lease:renewed' and job_id in (select id from jobs where run_id = ${runId}))
          order by id limit 50000`,
    ),
    poolSnapshot(db, opts.liveWindowMs),
  ]);
  const spec = version.spec;
  const [heldRow] = await query(db, sql`select count(*) as n from jobs where state = 'leased' and dag_id = ${run.dagId}`);
  const held = num(heldRow?.n);
  const cap = capOf(pool.poolSlots, spec.capFraction ?? opts.capFraction);
  const byTask = new Map(jobs.map((j) => [j.taskId, j]));
  const eventsByJob = new Map<string, typeof events>();
  for (const e of events) {
    const id = strOrNull(e.job_id);
    if (id === null) continue;
    const list = eventsByJob.get(id) ?? [];
    list.push(e);
    eventsByJob.set(id, list);
  }
  const fencedWrites = events
    .filter((e) => e.type === 'write:fenced')
    .map((e) => ({
      at: date(e.at),
      jobId: strOrNull(e.job_id),
      workerId: strOrNull(e.worker_id),
      fence: numOrNull(e.fence),
      reason: strOrNull(((e.data ?? {}) as Record<string, unknown>).reason),
    }));

  const timelines = jobs.map((job): JobTimeline => {
    const attempts: Attempt[] = [];
    let open: Attempt | null = null;
    for (const e of eventsByJob.get(job.id) ?? []) {
      const type = String(e.type);
      const data = (e.data ?? {}) as Record<string, unknown>;
      if (type === 'lease:granted') {
        if (open) attempts.push(open);
        open = {
          attempt: num(data.attempt),
          fence: num(e.fence),
          workerId: strOrNull(e.worker_id),
          grantedAt: date(e.at),
          endedAt: null,
          outcome: 'live',
          error: null,
          leaseExpiresAt: null,
          renewals: [],
        };
      } else if (type === 'lease:renewed') {
        if (open && num(e.fence) === open.fence) open.renewals.push(date(e.at));
      } else if (ENDS[type] && open) {
        open.endedAt = date(e.at);
        open.outcome = ENDS[type]!;
        open.error = strOrNull(data.error);
        attempts.push(open);
        open = null;
      }
    }
    if (open) {
      if (job.state === 'leased' && job.fence === open.fence) open.leaseExpiresAt = job.leaseExpiresAt;
      else if (job.endedAt) {
        open.endedAt = job.endedAt;
        open.outcome = job.state;
      }
      attempts.push(open);
    }
    const dependsOn = spec.tasks.find((t) => t.id === job.taskId)?.dependsOn ?? [];
    return { job, attempts, waitingReason: whyWaiting(job, dependsOn, byTask, { now: pool.now, held, cap, pool: pool.poolSlots, leased: pool.leasedJobs, capFraction: spec.capFraction ?? opts.capFraction }), dependsOn };
  });
  return { now: pool.now, run, spec, jobs: timelines, fencedWrites };
}

function whyWaiting(
  job: JobRow,
  dependsOn: string[],
  byTask: Map<string, JobRow>,
  f: { now: Date; held: number; cap: number; pool: number; leased: number; capFraction: number },
): string | null {
  if (job.state === 'waiting') {
    const open = dependsOn.filter((d) => byTask.get(d)?.state !== 'succeeded');
    return `waiting on dependencies: ${open.map((d) => `${d} (${byTask.get(d)?.state ?? 'unknown'})`).join(', ') || 'none left; promoted on the next dispatch'}`;
  }
  if (job.state !== 'ready') return null;
  if (job.nextAttemptAt && job.nextAttemptAt > f.now) return `retry backoff until ${job.nextAttemptAt.toISOString()} (attempt ${job.attempt} failed)`;
  if (f.pool === 0) return 'no free worker: no live worker is in the pool';
  if (f.held >= f.cap) {
    return `cap reached: the DAG holds ${f.held} leases; its cap is ${f.cap} = floor(${Math.round(f.capFraction * 1000) / 10}% x ${f.pool} pool slots)`;
  }
  if (f.leased >= f.pool) return `no free worker: ${f.leased} of ${f.pool} pool slots are busy`;
  return `ready since ${job.readyAt?.toISOString() ?? '?'}; a free slot exists, so the leader grants it on its next dispatch`;
}
