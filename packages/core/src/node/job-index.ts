import { assert } from '../assert';
import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { JobState } from '../model';
import type { DispatchDag, ReadyJob } from '../fairshare/plan';

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
}

/**
 * A shard leader's jobs, filed by state: the ready queues and the leased sets of each DAG,
 * which dispatch reads, and the ready jobs still in a retry backoff, which the node's
 * wake-up timer reads. Every change of a job's state goes through setState, so the queues
 * and sets always agree with the jobs themselves.
 */
export class JobIndex {
  private readonly jobs = new Map<string, MemJob>();
  private readonly ready = new Map<string, Map<string, MemJob>>();
  /** Ready jobs that may still be in their retry backoff: the only ones a wake-up is for. */
  private readonly backingOff = new Set<MemJob>();
  /** Jobs leased right now, per DAG: the fair-share count, kept as sets so it cannot drift. */
  private readonly leased = new Map<string, Set<string>>();
  private readonly capFraction = new Map<string, number | undefined>();

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
      const set = this.leased.get(job.dagId);
      set?.delete(job.id);
      if (set?.size === 0) this.leased.delete(job.dagId);
    }
    if (job.state === 'ready') this.dropReady(job);
    job.state = state;
    if (state === 'leased') {
      let set = this.leased.get(job.dagId);
      if (!set) this.leased.set(job.dagId, (set = new Set()));
      set.add(job.id);
    }
    if (state === 'ready') this.addReady(job);
  }

  /** A ready job's retry moved its backoff (a retry the cache already knew of). */
  moveBackoff(job: MemJob, nextAttemptAtMs: number): void {
    assert(job.state === 'ready', `job ${job.id} whose backoff moves is ready, not ${job.state}`);
    job.nextAttemptAtMs = nextAttemptAtMs;
    if (nextAttemptAtMs > 0) this.backingOff.add(job);
  }

  /** The DAG's share of the pool, as its latest running version says. */
  setCapFraction(dagId: string, capFraction: number | undefined): void {
    this.capFraction.set(dagId, capFraction);
  }

  /** A DAG with no active run left has no job here either: what is kept per DAG goes. */
  forgetDag(dagId: string): void {
    this.capFraction.delete(dagId);
  }

  /** Jobs believed leased since before `cutoffMs`, in the order they were indexed. */
  leasedBefore(cutoffMs: number): JobId[] {
    const stale: JobId[] = [];
    for (const job of this.jobs.values()) if (job.state === 'leased' && job.leasedAtMs < cutoffMs) stale.push(job.id);
    return stale;
  }

  /** The fair-share view of the shard: ready jobs past their backoff and held leases per DAG. */
  dispatchView(nowMs: number, capOf?: (capFraction: number | undefined) => number): DispatchDag<JobId>[] {
    const out: DispatchDag<JobId>[] = [];
    for (const [dagId, jobs] of this.ready) {
      // A DAG already at its cap can be granted nothing; skip copying its ready jobs.
      if (capOf && this.held(dagId) >= capOf(this.capFraction.get(dagId))) continue;
      const ready: ReadyJob<JobId>[] = [];
      for (const job of jobs.values()) if (job.nextAttemptAtMs <= nowMs) ready.push({ jobId: job.id, priority: job.priority, readyAtMs: job.readyAtMs });
      if (ready.length === 0) continue;
      out.push({ dagId, held: this.held(dagId), capFraction: this.capFraction.get(dagId), ready });
    }
    return out;
  }

  /** DAGs with ready jobs that hold their whole cap: they wait for fair share, not for workers. */
  cappedDags(capOf: (capFraction: number | undefined) => number): number {
    let n = 0;
    for (const dagId of this.ready.keys()) if (this.held(dagId) >= capOf(this.capFraction.get(dagId))) n++;
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

  heldByDag(): Map<string, number> {
    return new Map([...this.leased].map(([dagId, jobs]) => [dagId, jobs.size]));
  }

  readyCount(): number {
    let n = 0;
    for (const m of this.ready.values()) n += m.size;
    return n;
  }

  leasedCount(): number {
    let n = 0;
    for (const v of this.leased.values()) n += v.size;
    return n;
  }

  private held(dagId: string): number {
    return this.leased.get(dagId)?.size ?? 0;
  }

  private addReady(job: MemJob): void {
    let m = this.ready.get(job.dagId);
    if (!m) this.ready.set(job.dagId, (m = new Map()));
    m.set(job.id, job);
    if (job.nextAttemptAtMs > 0) this.backingOff.add(job);
  }

  private dropReady(job: MemJob): void {
    this.backingOff.delete(job);
    const m = this.ready.get(job.dagId);
    if (!m) return;
    m.delete(job.id);
    if (m.size === 0) this.ready.delete(job.dagId);
  }
}
