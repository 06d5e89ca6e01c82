import { assert } from '../assert';
import type { JobRow } from '../model';
import type { LeaderParts } from './leader-parts';
import type { LeaderState, MemRun } from './leader-state';
import type { MemJob } from './job-index';

/** The job-end row a sweep or a read hands on, as the leader applies it. */
export type EndedRow = Pick<JobRow, 'id' | 'state' | 'nextAttemptAt' | 'fence'>;

/**
 * A leader's side of jobs that ended, however it learnt of them (a worker's result, a
 * sweep, a re-read): the next attempt of a retried job, and for a job that succeeded or
 * failed for good the run's next step and, once all its jobs ended, its finish.
 */
export class JobEnds {
  constructor(
    private readonly s: LeaderState,
    private readonly parts: Pick<LeaderParts, 'finish'>,
  ) {}

  /** Applies many job ends at once, so their follow-up writes share batches. */
  async jobsEnded(rows: EndedRow[]): Promise<void> {
    await Promise.all(rows.map((row) => this.jobEnded(row)));
  }

  /** Applies a job row the store returned after a completion, failure, hand-back or sweep. */
  async jobEnded(row: EndedRow): Promise<void> {
    const { s } = this;
    const job = s.index.get(row.id);
    if (!job) return;
    const run = s.runs.get(job.runId);
    // A run's jobs leave the index in the same step as the run (LeaderState.dropRun).
    assert(run, `job ${job.id} of the index has its run ${job.runId} in memory`);
    if (job.state === row.state) {
      // Already known; a retry may only have moved its backoff.
      if (row.state === 'ready') s.index.moveBackoff(job, row.nextAttemptAt?.getTime() ?? 0);
      return;
    }
    job.fence = Math.max(job.fence, row.fence);
    if (row.state === 'ready') {
      // The attempt ended (a retryable failure, a hand-back, an expiry); the next one begins.
      s.deps.traces?.attemptEnded(job.id, 'retrying');
      s.deps.traces?.attemptReady(job, s.shard);
      job.holder = null;
      job.nextAttemptAtMs = row.nextAttemptAt?.getTime() ?? 0;
      job.readyAtMs = s.deps.clock.nowMs();
      if (run.machine.state(job.taskId) === 'leased') run.machine.onRetry(job.taskId);
      s.index.setState(job, 'ready');
      s.deps.kick();
      return;
    }
    if (row.state !== 'succeeded' && row.state !== 'failed') {
      // Still leased (or waiting): nothing ended; keep the cache honest.
      s.index.setState(job, row.state);
      return;
    }
    s.deps.traces?.attemptEnded(job.id, row.state);
    await this.applyEnd(run, job, row.state);
    // A job the store moved to failed is out of attempts (a retryable failure comes back ready).
    if (row.state === 'failed') s.deps.notifications?.taskFailed(s.token, { id: job.id, runId: job.runId, dagId: job.dagId, taskId: job.taskId });
    await this.parts.finish.maybeFinish(run);
    s.deps.kick();
  }

  /**
   * Records a job's success or failure and returns the run's next step, promotions or
   * skips. It hands back that step's own promise rather than awaiting it: an async wrapper
   * would add turns and reorder the leader's concurrent steps.
   */
  private applyEnd(run: MemRun, job: MemJob, state: 'succeeded' | 'failed'): Promise<void> {
    this.s.index.setState(job, state);
    if (!canEnd(run, job.taskId)) return this.parts.finish.settle(run, { ready: [], upstreamFailed: [], skipped: [] });
    const settled = state === 'succeeded' ? run.machine.onSucceeded(job.taskId) : run.machine.onFailed(job.taskId);
    return this.parts.finish.settle(run, settled);
  }
}

/** A job can end in the machine only from ready or leased; anything else was already applied. */
function canEnd(run: MemRun, taskId: string): boolean {
  const state = run.machine.state(taskId);
  return state === 'ready' || state === 'leased';
}
