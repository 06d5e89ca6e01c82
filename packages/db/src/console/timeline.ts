import { sql } from 'drizzle-orm';
import {
  clearsOfTask,
  DEFAULT_POOL,
  needOf,
  numberAttempts,
  pendingClear,
  unmetNeed,
  type ClearMark,
  type DagSpec,
  type JobId,
  type JobRow,
  type RunId,
  type RunRow,
  type WorkerId,
} from '@fenceline/core';
import { getDagVersion } from '../store/dags';
import { listJobs } from '../store/jobs';
import { resourceUse } from '../store/resources';
import { getRun } from '../store/runs';
import { listRunActions } from '../store/run-actions';
import { capOf, poolSnapshot } from './pool';
import { liveOffers } from './routing';
import { date, dateOrNull, jobIdOrNull, num, numOrNull, query, strOrNull, workerIdOrNull, type ConsoleDb } from './sql';

/** One lease of a job, from its grant to whatever ended it. */
export interface Attempt {
  /** The job's retry-budget count at this lease (a clear starts it again at 1). */
  attempt: number;
  /** Its number in the job's whole life, 1, 2, 3 ..., which a clear does not reset: what a person reads. */
  number: number;
  /** For the first attempt after a clear (or a retry from failure): that clear, and who asked for it. */
  afterClear: ClearMark | null;
  fence: number;
  workerId: WorkerId | null;
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
  /** For a failed attempt that is retried: when the backoff lets the next one be leased. */
  retryAt: Date | null;
}

/**
 * A stretch of a job's life on the run timeline: waiting on its dependencies, ready and
 * waiting for a slot (or under the cap), waiting out a retry's backoff, or an attempt.
 * `open` means it has not ended yet: `to` is the store's time now, or for a backoff the
 * moment it will end.
 */
export interface TimelineInterval {
  kind: 'dependencies' | 'ready' | 'backoff' | 'attempt';
  from: Date;
  to: Date;
  open: boolean;
  /** For an attempt: its number in the job's life and how it ended (see Attempt.outcome). */
  attempt?: number;
  outcome?: string;
}

export interface JobTimeline {
  job: JobRow;
  attempts: Attempt[];
  /** Every clear of the task, oldest first: each reset its retry budget. */
  clears: ClearMark[];
  /** A clear no attempt has followed yet (the job waits to run again). */
  pendingClear: ClearMark | null;
  /** The job's life in order, from the run's start: what the run timeline draws. */
  intervals: TimelineInterval[];
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
  fencedWrites: { at: Date; jobId: JobId | null; workerId: WorkerId | null; fence: number | null; reason: string | null }[];
}

const ENDS: Record<string, string> = {
  'job:succeeded': 'succeeded',
  'job:failed': 'failed',
  'job:retrying': 'retrying',
  'lease:expired': 'expired',
  'lease:released': 'released',
};

/** End events after which the job is ready again (a swept lease only when attempts remain). */
function readyAgain(outcome: string, data: Record<string, unknown>): boolean {
  return outcome === 'retrying' || outcome === 'released' || (outcome === 'expired' && data.state === 'ready');
}

/**
 * The run with every job and every attempt. Attempts come from the event log (by the run
 * index), in the order the events happened (each carries the time it happened): a
 * `lease:granted` opens one with its fence, and the next end event of that job closes it.
 * Where the job's row holds the store's own time for a moment, that time is used instead
 * of the event's stamp (the latest lease's grant, the job's end, its latest return to
 * ready). The reason a waiting job waits is worked out from the same facts the leader
 * uses: dependencies, backoff, the DAG's cap against the pool, free slots.
 */
export async function runTimeline(db: ConsoleDb, runId: RunId, opts: { capFraction: number; liveWindowMs: number }): Promise<RunTimeline> {
  const run = await getRun(db, runId);
  const [version, jobs, events, pool, live, limits, actions] = await Promise.all([
    getDagVersion(db, run.dagId, run.dagVersion),
    listJobs(db, runId),
    // Renewal events carry the job but not the run (the renewing node may not lead it), so they are found by job.
    query(
      db,
      sql`select id, at, type, job_id, worker_id, fence, data from events
          where run_id = ${runId}
             or (type = 'lease:renewed' and job_id in (select id from jobs where run_id = ${runId}))
          order by at, id limit 50000`,
    ),
    poolSnapshot(db, opts.liveWindowMs),
    liveOffers(db, opts.liveWindowMs),
    resourceUse(db),
    listRunActions(db, runId),
  ]);
  const spec = version.spec;
  // The cap is per DAG and pool: the DAG's leases are counted per pool of their task (as this run's version names it).
  const poolOfTask = new Map(spec.tasks.map((t) => [t.id, t.pool ?? DEFAULT_POOL]));
  const heldRows = await query(db, sql`select task_id, count(*) as n from jobs where state = 'leased' and dag_id = ${run.dagId} group by task_id`);
  const heldIn = new Map<string, number>();
  for (const r of heldRows) {
    const p = poolOfTask.get(String(r.task_id)) ?? DEFAULT_POOL;
    heldIn.set(p, (heldIn.get(p) ?? 0) + num(r.n));
  }
  const slotsIn = new Map(live.pools.map((p) => [p.pool, p.slots]));
  // Busy slots per pool: the leases held by each pool's live workers.
  const byHolder = await query(db, sql`select holder, count(*) as n from jobs where state = 'leased' group by holder`);
  const poolOfWorker = new Map(live.offers.map((o) => [String(o.workerId), o.offer.pool]));
  const leasedIn = new Map<string, number>();
  for (const r of byHolder) {
    const p = poolOfWorker.get(String(r.holder));
    if (p !== undefined) leasedIn.set(p, (leasedIn.get(p) ?? 0) + num(r.n));
  }
  const offers = live.offers.map((o) => o.offer);
  const limitUse = new Map(limits.map((l) => [l.name, l]));
  const byTask = new Map(jobs.map((j) => [j.taskId, j]));
  const eventsByJob = new Map<string, typeof events>();
  // Event batches are keyed and kept once, but a log written before keys (migration 0020)
  // may hold a batch twice, alike in type, fence, worker and time: the timeline takes it once.
  const seenEvents = new Set<string>();
  for (const e of events) {
    const id = strOrNull(e.job_id);
    if (id === null) continue;
    const identity = `${id}\u0000${String(e.type)}\u0000${String(e.fence)}\u0000${String(e.worker_id)}\u0000${date(e.at).getTime()}`;
    if (seenEvents.has(identity)) continue;
    seenEvents.add(identity);
    const list = eventsByJob.get(id) ?? [];
    list.push(e);
    eventsByJob.set(id, list);
  }
  const fencedWrites = events
    .filter((e) => e.type === 'write:fenced')
    .map((e) => ({
      at: date(e.at),
      jobId: jobIdOrNull(e.job_id),
      workerId: workerIdOrNull(e.worker_id),
      fence: numOrNull(e.fence),
      reason: strOrNull(((e.data ?? {}) as Record<string, unknown>).reason),
    }));

  const runStart = run.startedAt ?? run.createdAt;
  const timelines = jobs.map((job): JobTimeline => {
    const attempts: Omit<Attempt, 'number' | 'afterClear'>[] = [];
    // Whether each attempt's end made the job ready again, by index in `attempts`.
    const reReady: boolean[] = [];
    let open: Omit<Attempt, 'number' | 'afterClear'> | null = null;
    for (const e of eventsByJob.get(job.id) ?? []) {
      const type = String(e.type);
      const data = (e.data ?? {}) as Record<string, unknown>;
      if (type === 'lease:granted') {
        if (open) {
          attempts.push(open);
          reReady.push(false);
        }
        open = {
          attempt: num(data.attempt),
          fence: num(e.fence),
          workerId: workerIdOrNull(e.worker_id),
          grantedAt: date(e.at),
          endedAt: null,
          outcome: 'live',
          error: null,
          leaseExpiresAt: null,
          renewals: [],
          retryAt: null,
        };
      } else if (type === 'lease:renewed') {
        if (open && num(e.fence) === open.fence) open.renewals.push(date(e.at));
      } else if (ENDS[type] && open) {
        open.endedAt = date(e.at);
        open.outcome = ENDS[type]!;
        // A revoked or handed-back lease has no error, but its event says why it ended.
        open.error = strOrNull(data.error) ?? strOrNull(data.reason);
        open.retryAt = open.outcome === 'retrying' ? dateOrNull(data.nextAttemptAt) : null;
        attempts.push(open);
        reReady.push(readyAgain(open.outcome, data));
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
      reReady.push(false);
    }
    const clears = clearsOfTask(actions, job.taskId);
    const numbered: Attempt[] = numberAttempts(attempts, clears);
    useRowTimes(job, numbered, reReady);
    const task = spec.tasks.find((t) => t.id === job.taskId);
    const taskPool = task?.pool ?? DEFAULT_POOL;
    const dependsOn = task?.dependsOn ?? [];
    const upstreamEnds = dependsOn.map((d) => byTask.get(d)?.endedAt?.getTime() ?? 0);
    const upstreamEnd = upstreamEnds.length > 0 ? new Date(Math.max(...upstreamEnds)) : runStart;
    return {
      job,
      attempts: numbered,
      clears,
      pendingClear: pendingClear(numbered, clears),
      intervals: intervalsOf(job, numbered, reReady, { runStart, upstreamEnd, now: pool.now }),
      waitingReason: whyWaiting(job, dependsOn, byTask, {
        now: pool.now,
        held: heldIn.get(taskPool) ?? 0,
        cap: capOf(slotsIn.get(taskPool) ?? 0, spec.capFraction ?? opts.capFraction),
        pool: slotsIn.get(taskPool) ?? 0,
        poolName: taskPool,
        leased: leasedIn.get(taskPool) ?? 0,
        capFraction: spec.capFraction ?? opts.capFraction,
        unmet: task ? unmetNeed(needOf(task), offers) : null,
        short: task ? shortLimits(task.resources ?? {}, limitUse) : null,
        lastAttempt: numbered.at(-1)?.number ?? null,
      }),
      dependsOn,
    };
  });
  return { now: pool.now, run, spec, jobs: timelines, fencedWrites };
}

/**
 * The job's row holds the store's own times for its latest lease (leased_at), its end
 * (ended_at) and its latest return to ready (ready_at, which a retry, a swept lease or a
 * hand-back resets): they replace the events' stamps, which are a node's estimate taken
 * just after the write. A row time is used only while the fences say it belongs to that
 * attempt (a lease whose grant event was lost in a crash leaves the fences apart).
 */
function useRowTimes(job: JobRow, attempts: Attempt[], reReady: boolean[]): void {
  const last = attempts[attempts.length - 1];
  if (!last) return;
  // The latest lease: its fence is the job's, or one below when it was revoked or handed back.
  const latest = job.fence === last.fence || (job.fence === last.fence + 1 && last.outcome !== 'succeeded' && last.outcome !== 'failed');
  if (latest && job.leasedAt) last.grantedAt = job.leasedAt;
  if (latest && job.endedAt && (job.state === 'succeeded' || job.state === 'failed') && last.outcome !== 'live') last.endedAt = job.endedAt;
  const k = reReady.lastIndexOf(true);
  const made = attempts[k];
  if (made && job.readyAt && job.readyAt.getTime() >= made.grantedAt.getTime() && attempts.slice(k + 1).every((a) => a.fence > made.fence)) made.endedAt = job.readyAt;
}

/**
 * The job's life as consecutive intervals. Its first readiness is the row's ready_at while
 * no attempt has reset it; after one has, it is the end of its latest upstream job (the
 * store promotes a job as its last dependency ends), or the run's start for a root.
 */
function intervalsOf(job: JobRow, attempts: Attempt[], reReady: boolean[], t: { runStart: Date; upstreamEnd: Date; now: Date }): TimelineInterval[] {
  const out: TimelineInterval[] = [];
  const add = (kind: TimelineInterval['kind'], from: Date, to: Date | null, extra: Partial<TimelineInterval> = {}): void => {
    const end = to ?? t.now;
    if (end.getTime() < from.getTime()) return;
    out.push({ kind, from, to: end, open: to === null, ...extra });
  };
  const firstReady = reReady.includes(true) ? t.upstreamEnd : job.readyAt;
  const firstGrant = attempts[0]?.grantedAt ?? null;
  const stillWaiting = job.state === 'waiting' || (firstReady === null && firstGrant === null);
  const depsEnd = stillWaiting ? (job.endedAt ?? null) : (firstReady ?? firstGrant);
  if (depsEnd === null || depsEnd.getTime() > t.runStart.getTime()) add('dependencies', t.runStart, depsEnd);
  if (stillWaiting) return out;
  // From here on the job is ready whenever it is not leased and not in a backoff.
  let readySince: Date | null = firstReady ?? firstGrant;
  for (const a of attempts) {
    if (readySince) add('ready', readySince, a.grantedAt);
    add('attempt', a.grantedAt, a.endedAt, { attempt: a.number, outcome: a.outcome });
    readySince = null;
    if (a.endedAt && a.retryAt) {
      add('backoff', a.endedAt, a.retryAt, { open: a.retryAt.getTime() > t.now.getTime() });
      readySince = a.retryAt;
    } else if (a.endedAt && a.outcome !== 'succeeded' && a.outcome !== 'failed') readySince = a.endedAt;
  }
  if (readySince && job.state === 'ready' && readySince.getTime() <= t.now.getTime()) add('ready', readySince, null);
  if (attempts.length === 0 && job.state !== 'ready' && readySince) add('ready', readySince, job.endedAt);
  return out;
}

/** The limits a task consumes that have too few free units for it now, in the words the run page shows; null when all fit. */
function shortLimits(resources: Record<string, number>, use: Map<string, { capacity: number; used: number }>): string | null {
  const short = Object.entries(resources).flatMap(([name, units]) => {
    const l = use.get(name);
    if (l === undefined) return [`limit \`${name}\` does not exist`];
    return l.capacity - l.used < units ? [`limit \`${name}\` has ${Math.max(0, l.capacity - l.used)} of ${l.capacity} units free, the task needs ${units}`] : [];
  });
  return short.length > 0 ? short.join('; ') : null;
}

function whyWaiting(
  job: JobRow,
  dependsOn: string[],
  byTask: Map<string, JobRow>,
  f: {
    now: Date;
    held: number;
    cap: number;
    pool: number;
    poolName: string;
    leased: number;
    capFraction: number;
    unmet: string | null;
    short: string | null;
    /** The latest attempt's number in the job's life (what the attempts table reads), null before the first. */
    lastAttempt: number | null;
  },
): string | null {
  if (job.state === 'waiting') {
    const open = dependsOn.filter((d) => byTask.get(d)?.state !== 'succeeded');
    return `waiting on dependencies: ${open.map((d) => `${d} (${byTask.get(d)?.state ?? 'unknown'})`).join(', ') || 'none left; promoted on the next dispatch'}`;
  }
  if (job.state !== 'ready') return null;
  if (job.nextAttemptAt && job.nextAttemptAt > f.now) return `retry backoff until ${job.nextAttemptAt.toISOString()} (attempt ${f.lastAttempt ?? job.attempt} failed)`;
  // No live worker can take it at all: said first, since neither the cap nor a free slot would help.
  if (f.unmet !== null) return `waiting for a worker: ${f.unmet}`;
  if (f.pool === 0) return `no free worker: no live worker is in pool \`${f.poolName}\``;
  if (f.short !== null) return `waiting for a resource limit: ${f.short}`;
  if (f.held >= f.cap) {
    return `cap reached: the DAG holds ${f.held} leases in pool \`${f.poolName}\`; its cap is ${f.cap} = floor(${Math.round(f.capFraction * 1000) / 10}% x ${f.pool} pool slots)`;
  }
  if (f.leased >= f.pool) return `no free worker: ${f.leased} of ${f.pool} slots of pool \`${f.poolName}\` are busy`;
  return `ready since ${job.readyAt?.toISOString() ?? '?'}; a free slot exists, so the leader grants it on its next dispatch`;
}
