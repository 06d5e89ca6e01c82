import { assert } from '../assert';
import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { JobState } from '../model';
import type { DispatchDag, ReadyJob } from '../fairshare/plan';
import { DEFAULT_POOL } from '../routing/offer';

/** A job of an active run, as the leader keeps it in memory. */
export interface MemJob {
  id: JobId;
  runId: RunId;
  dagId: DagId;
  taskId: string;
  state: JobState;
  priority: number;
  readyAtMs: number;
  nextAttemptAtMs: number;
  fence: number;
  holder: WorkerId | null;
  leasedAtMs: number;
  /** The pool its task runs in (routing/offer.ts): its DAG's fair share is counted per pool. */
  pool: string;
  /** needKey of its task: which workers may run it. */
  need: string;
  /** Units of resource limits its lease holds (resources/limits.ts); none when absent. */
  resources?: Record<string, number>;
}

/** A DAG's jobs of one pool: the unit the fair-share cap counts. */
interface Share<T> {
  dagId: string;
  pool: string;
  jobs: T;
}

function shareKey(job: MemJob): string {
  return job.pool === DEFAULT_POOL ? job.dagId : `${job.dagId}\u0000${job.pool}`;
}

/** A DAG's view for dispatch: its ready jobs and held leases in one pool. */
export interface PoolDispatchDag<J extends string> extends DispatchDag<J> {
  pool: string;
}

/**
 * A shard leader's jobs, filed by state: the ready queues and the leased sets of each DAG,
 * which dispatch reads, and the ready jobs still in a retry backoff, which the node's
 * wake-up timer reads. Every change of a job's state goes through setState, so the queues
 * and sets always agree with the jobs themselves.
 */
export class JobIndex {
  private readonly jobs = new Map<string, MemJob>();
  /** Ready jobs per DAG and pool (shareKey). */
  private readonly ready = new Map<string, Share<Map<string, MemJob>>>();
  /** Ready jobs that may still be in their retry backoff: the only ones a wake-up is for. */
  private readonly backingOff = new Set<MemJob>();
  /** Jobs leased right now, per DAG and pool: the fair-share count, kept as sets so it cannot drift. */
  private readonly leased = new Map<string, Share<Set<string>>>();
  private readonly capFraction = new Map<string, number | undefined>();
  private readonly priority = new Map<string, number>();
  /** Ready jobs that consume resource limits, counted as they enter and leave the ready queues. */
  private limitedReady = 0;

  get(jobId: string): MemJob | undefined {
    return this.jobs.get(jobId);
  }

  has(jobId: string): boolean {
    return this.jobs.has(jobId);
  }

  /** Files a job read from the store under the state it was read in. */
  add(job: MemJob): void {
    assert(!this.jobs.has(job.id), `job ${job.id} is indexed once`);
    const state = job.state;
    this.jobs.set(job.id, job);
    job.state = 'waiting';
    this.setState(job, state);
  }

  /** Drops a job of a finished run; a reference still held elsewhere sees it cancelled. */
  remove(jobId: string): void {
    const job = this.jobs.get(jobId);
    if (job) this.setState(job, 'cancelled');
    this.jobs.delete(jobId);
  }

  /** The one place a job changes state. */
  setState(job: MemJob, state: JobState): void {
    if (job.state === 'leased') {
      const key = shareKey(job);
      const share = this.leased.get(key);
      share?.jobs.delete(job.id);
      if (share?.jobs.size === 0) this.leased.delete(key);
    }
    if (job.state === 'ready') this.dropReady(job);
    job.state = state;
    if (state === 'leased') {
      const key = shareKey(job);
      let share = this.leased.get(key);
      if (!share) this.leased.set(key, (share = { dagId: job.dagId, pool: job.pool, jobs: new Set() }));
      share.jobs.add(job.id);
    }
    if (state === 'ready') this.addReady(job);
  }

  /** A ready job's retry moved its backoff (a retry the cache already knew of). */
  moveBackoff(job: MemJob, nextAttemptAtMs: number): void {
    assert(job.state === 'ready', `job ${job.id} whose backoff moves is ready, not ${job.state}`);
    job.nextAttemptAtMs = nextAttemptAtMs;
    if (nextAttemptAtMs > 0) this.backingOff.add(job);
  }

  /** The DAG's share of the pool and its priority, as its latest running version says. */
  setCapFraction(dagId: string, capFraction: number | undefined, priority = 0): void {
    this.capFraction.set(dagId, capFraction);
    if (priority === 0) this.priority.delete(dagId);
    else this.priority.set(dagId, priority);
  }

  /** A DAG with no active run left has no job here either: what is kept per DAG goes. */
  forgetDag(dagId: string): void {
    this.capFraction.delete(dagId);
    this.priority.delete(dagId);
  }

  /** Jobs believed leased since before `cutoffMs`, in the order they were indexed. */
  leasedBefore(cutoffMs: number): JobId[] {
    const stale: JobId[] = [];
    for (const job of this.jobs.values()) if (job.state === 'leased' && job.leasedAtMs < cutoffMs) stale.push(job.id);
    return stale;
  }

  /**
   * The fair-share view of the shard: per DAG and pool, ready jobs past their backoff and
   * held leases. With `capOf`, a DAG already at its cap in a pool is left out (it can be
   * granted nothing there, so its ready jobs are not copied); a node that lends idle slots
   * passes none.
   */
  dispatchView(nowMs: number, capOf?: (capFraction: number | undefined, pool: string) => number): PoolDispatchDag<JobId>[] {
    const out: PoolDispatchDag<JobId>[] = [];
    for (const [key, share] of this.ready) {
      const { dagId, pool } = share;
      const held = this.held(key);
      if (capOf && held >= capOf(this.capFraction.get(dagId), pool)) continue;
      const ready: ReadyJob<JobId>[] = [];
      for (const job of share.jobs.values())
        if (job.nextAttemptAtMs <= nowMs)
          ready.push({ jobId: job.id, priority: job.priority, readyAtMs: job.readyAtMs, need: job.need, ...(job.resources ? { resources: job.resources } : {}) });
      if (ready.length === 0) continue;
      const priority = this.priority.get(dagId);
      out.push({ dagId, pool, held, capFraction: this.capFraction.get(dagId), ...(priority === undefined ? {} : { priority }), ready });
    }
    return out;
  }

  /** DAGs (counted once per pool) with ready jobs that hold their whole cap: they wait for fair share, not for workers. */
  cappedDags(capOf: (capFraction: number | undefined, pool: string) => number): number {
    let n = 0;
    for (const [key, share] of this.ready) if (this.held(key) >= capOf(this.capFraction.get(share.dagId), share.pool)) n++;
    return n;
  }

  /** The earliest future retry time, so the node can wake up for it. */
  nextRetryAtMs(nowMs: number): number | null {
    let min: number | null = null;
    for (const j of this.backingOff) {
      // A job whose backoff has passed needs no wake-up any more; one that left the ready
      // queue was dropped from this set when it left.
      if (j.nextAttemptAtMs <= nowMs) this.backingOff.delete(j);
      else if (min == null || j.nextAttemptAtMs < min) min = j.nextAttemptAtMs;
    }
    return min;
  }

  /** Leases held per DAG, over all its pools. */
  heldByDag(): Map<string, number> {
    const out = new Map<string, number>();
    for (const share of this.leased.values()) out.set(share.dagId, (out.get(share.dagId) ?? 0) + share.jobs.size);
    return out;
  }

  /** Whether a ready job consumes a resource limit (a dispatch round then reads the limits' use). */
  hasLimitedReady(): boolean {
    return this.limitedReady > 0;
  }

  readyCount(): number {
    let n = 0;
    for (const share of this.ready.values()) n += share.jobs.size;
    return n;
  }

  leasedCount(): number {
    let n = 0;
    for (const share of this.leased.values()) n += share.jobs.size;
    return n;
  }

  private held(key: string): number {
    return this.leased.get(key)?.jobs.size ?? 0;
  }

  private addReady(job: MemJob): void {
    const key = shareKey(job);
    let share = this.ready.get(key);
    if (!share) this.ready.set(key, (share = { dagId: job.dagId, pool: job.pool, jobs: new Map() }));
    share.jobs.set(job.id, job);
    if (job.resources) this.limitedReady++;
    if (job.nextAttemptAtMs > 0) this.backingOff.add(job);
  }

  private dropReady(job: MemJob): void {
    this.backingOff.delete(job);
    const key = shareKey(job);
    const share = this.ready.get(key);
    if (!share) return;
    if (share.jobs.delete(job.id) && job.resources) this.limitedReady--;
    if (share.jobs.size === 0) this.ready.delete(key);
  }
}
