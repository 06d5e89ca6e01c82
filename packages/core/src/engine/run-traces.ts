import type { JobId, RunId, WorkerId } from '../ids';
import type { JobState, RunRow } from '../model';
import type { GrantedLease } from '../store';
import type { SpanAttributes, Tracing, TraceSpan } from '../tracing';
import type { MemJob } from './job-index';
import { isRevocation, type PollItem } from './worker-pool';

/**
 * The most spans of each kind (runs, job attempts) a node keeps open. Runs and attempts
 * outlive a leader, and a span whose end this node never sees (its shard moved, its run
 * was finished by another node) would otherwise stay here for good: past the bound, the
 * oldest is let go unended, which the tracing backend shows as a lost span.
 */
export const MAX_OPEN_SPANS = 50_000;

/** Ended run spans kept for the log lines written just after a run ends (its run:finished). */
const RECENTLY_ENDED = 1_000;

interface OpenSpan {
  span: TraceSpan;
  shard: number;
}

/**
 * The spans of the runs and job attempts a node's leaders carry: a run's span from its
 * start to its end, and under it one span per job attempt, from ready through leased and
 * delivered to its result. An attempt's trace context travels with its lease to the
 * worker (Assignment.traceparent), whose own span of the job becomes its child.
 *
 * A node makes one only when tracing is on; with tracing off, the leaders hold null and
 * every hook is a skipped optional call, so the hot path builds nothing.
 */
export class RunTraces {
  private readonly runs = new Map<RunId, OpenSpan>();
  private readonly attempts = new Map<JobId, OpenSpan>();
  private readonly ended = new Map<RunId, TraceSpan>();

  constructor(
    readonly tracing: Tracing,
    /** Told how many open spans were let go unended (the bound, or a shard lost). */
    private readonly dropped: (n: number) => void = () => undefined,
  ) {}

  /** A run became active under this node's leader of `shard` (started, or adopted on load). */
  runStarted(row: RunRow, shard: number): void {
    if (this.runs.has(row.id)) return;
    const span = this.tracing.start('fenceline.run', {
      attributes: {
        'fenceline.run.id': row.id,
        'fenceline.dag.id': row.dagId,
        'fenceline.dag.version': row.dagVersion,
        'fenceline.run.trigger': row.trigger,
        'fenceline.run.scheduled_at': row.scheduledAt.toISOString(),
        'fenceline.shard': shard,
      },
    });
    this.keep(this.runs, row.id, { span, shard });
  }

  /** A run left the leader's memory: its open attempts end with it, then its span. */
  runEnded(runId: RunId, jobIds: Iterable<JobId>, outcome: string): void {
    for (const jobId of jobIds) this.attemptEnded(jobId, 'ended-with-run');
    const open = this.runs.get(runId);
    if (!open) return;
    this.runs.delete(runId);
    open.span.setAttributes({ 'fenceline.run.state': outcome });
    open.span.end(outcome === 'failed' ? 'the run failed' : undefined);
    this.ended.set(runId, open.span);
    if (this.ended.size > RECENTLY_ENDED) this.ended.delete(this.ended.keys().next().value as RunId);
  }

  /** A job became ready: a new attempt begins, as a child of its run's span. */
  attemptReady(job: MemJob, shard: number): void {
    this.attempt(job, shard).event('ready');
  }

  /** A job's lease was granted: the attempt learns its number, fence and worker. */
  attemptLeased(job: MemJob, lease: GrantedLease, shard: number): void {
    const span = this.attempt(job, shard);
    const attributes: SpanAttributes = { 'fenceline.job.attempt': lease.attempt, 'fenceline.job.fence': lease.fence, 'fenceline.worker.id': lease.workerId };
    span.setAttributes(attributes);
    span.event('leased', attributes);
  }

  /** A worker's poll was answered with these leases (revocations are no attempt's step). */
  delivered(workerId: WorkerId, items: readonly PollItem[]): void {
    for (const item of items) if (!isRevocation(item)) this.attempts.get(item.jobId)?.span.event('delivered', { 'fenceline.worker.id': workerId });
  }

  /** The attempt's result is known (a success, a failure, a retry, a hand-back or an expiry). */
  attemptEnded(jobId: JobId, state: JobState | 'retrying' | 'ended-with-run'): void {
    const open = this.attempts.get(jobId);
    if (!open) return;
    this.attempts.delete(jobId);
    open.span.event('result', { 'fenceline.job.state': state });
    open.span.setAttributes({ 'fenceline.job.state': state });
    open.span.end(state === 'failed' ? 'the job failed' : undefined);
  }

  /** The trace context a lease carries to its worker, if its attempt has a span here. */
  traceparentOf(jobId: JobId): string | undefined {
    return this.attempts.get(jobId)?.span.traceparent();
  }

  /** The span a log line about this job or run belongs to: the attempt's, else the run's. */
  spanOf(ids: { jobId?: JobId | null; runId?: RunId | null }): TraceSpan | undefined {
    if (ids.jobId) {
      const attempt = this.attempts.get(ids.jobId);
      if (attempt) return attempt.span;
    }
    return ids.runId ? (this.runs.get(ids.runId)?.span ?? this.ended.get(ids.runId)) : undefined;
  }

  /**
   * The node no longer leads `shard`: its spans are let go unended, since the next leader
   * carries the shard's runs on (and starts spans of its own for them).
   */
  dropShard(shard: number): void {
    let n = 0;
    for (const map of [this.runs, this.attempts] as Map<string, OpenSpan>[]) {
      for (const [id, open] of map) {
        if (open.shard !== shard) continue;
        map.delete(id);
        n++;
      }
    }
    if (n > 0) this.dropped(n);
  }

  /** How many spans are open, for tests of the bound. */
  openCount(): { runs: number; attempts: number } {
    return { runs: this.runs.size, attempts: this.attempts.size };
  }

  private attempt(job: MemJob, shard: number): TraceSpan {
    const open = this.attempts.get(job.id);
    if (open) return open.span;
    const parent = this.runs.get(job.runId)?.span;
    const span = this.tracing.start('fenceline.job.attempt', {
      ...(parent ? { parent } : {}),
      attributes: { 'fenceline.job.id': job.id, 'fenceline.run.id': job.runId, 'fenceline.dag.id': job.dagId, 'fenceline.task.id': job.taskId, 'fenceline.shard': shard },
    });
    this.keep(this.attempts, job.id, { span, shard });
    return span;
  }

  private keep<K>(map: Map<K, OpenSpan>, key: K, open: OpenSpan): void {
    map.set(key, open);
    if (map.size <= MAX_OPEN_SPANS) return;
    // A Map iterates in insertion order: the first key is the oldest open span.
    const oldest = map.keys().next().value as K;
    map.delete(oldest);
    this.dropped(1);
  }
}
