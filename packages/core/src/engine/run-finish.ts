import type { JobState } from '../model';
import { RunMachine, type Settled } from '../run/machine';
import type { LeaderParts } from './leader-parts';
import type { LeaderState, MemRun } from './leader-state';

/**
 * A leader's steps after jobs end: promoting the jobs whose dependencies all succeeded,
 * marking those downstream of a failure, and finishing runs whose jobs all ended, plus
 * the repair that completes these steps when a crash or a failed write left them undone.
 */
export class RunFinish {
  constructor(
    private readonly s: LeaderState,
    private readonly parts: Pick<LeaderParts, 'starts' | 'sync'>,
  ) {}

  async promote(run: MemRun, taskIds: string[]): Promise<void> {
    const { s } = this;
    if (taskIds.length === 0) return;
    const ids = taskIds.map((t) => run.jobIdByTask.get(t)!).filter(Boolean);
    const flags = await s.guard(() => s.writes.promote(s.token, ids));
    if (flags == null) return;
    const moved = ids.filter((_, i) => flags[i]);
    const nowMs = s.deps.clock.nowMs();
    for (const id of moved) {
      const job = s.index.get(id);
      if (!job) continue;
      job.readyAtMs = nowMs;
      s.index.setState(job, 'ready');
      s.deps.traces?.attemptReady(job, s.shard);
    }
    // A job not moved was promoted already (by a write whose answer was lost); re-read it.
    const movedIds = new Set(moved);
    await this.parts.sync.resyncMany(ids.filter((id) => !movedIds.has(id)));
  }

  /**
   * Writes what one event or a repair decided: promotions, then the tasks that will not
   * run. While such writes are out the run is not finished: the machine already counts
   * those tasks as ended, the store does not yet, and refuses to finish a run with an open
   * job. Whoever settles last finishes the run (every settle is followed by maybeFinish).
   */
  async settle(run: MemRun, settled: Settled): Promise<void> {
    const { s } = this;
    if (settled.ready.length + settled.upstreamFailed.length + settled.skipped.length === 0) return;
    const id = run.row.id;
    s.busy.begin(id, 'settling');
    try {
      await this.promote(run, settled.ready);
      await this.end(run, settled.upstreamFailed, 'upstream_failed');
      await this.end(run, settled.skipped, 'skipped');
    } finally {
      s.busy.end(id, 'settling');
    }
  }

  /** Marks tasks that will not run, as upstream_failed or skipped. */
  private async end(run: MemRun, taskIds: string[], state: 'upstream_failed' | 'skipped'): Promise<void> {
    const { s } = this;
    if (taskIds.length === 0) return;
    const ids = taskIds.map((t) => run.jobIdByTask.get(t)!).filter(Boolean);
    const flags = await s.guard(() => (state === 'skipped' ? s.writes.markSkipped(s.token, ids) : s.writes.skip(s.token, ids)));
    for (const id of ids.filter((_, i) => flags?.[i])) {
      const job = s.index.get(id);
      if (!job) continue;
      s.index.setState(job, state);
    }
  }

  async maybeFinish(run: MemRun): Promise<void> {
    const { s } = this;
    const outcome = run.machine.outcome();
    if (outcome === 'running' || s.busy.isBusy(run.row.id, 'settling') || !s.busy.tryBegin(run.row.id, 'finishing')) return;
    let done: boolean | null;
    let ended: 'succeeded' | 'failed' | 'cancelled' | null = outcome;
    try {
      done = await s.guard(() => s.writes.finishRun(s.token, { runId: run.row.id, state: outcome }));
      // Refused: finished already (by a predecessor whose answer was lost), or the store
      // still has a job of it open. Only in the first case is the run done with; in the
      // second, the next reconciliation's repair finishes it.
      if (done === false) {
        const state = (await s.deps.store.readRun(run.row.id).catch(() => null))?.run.state;
        if (state === 'running') done = null;
        ended = state === 'succeeded' || state === 'failed' || state === 'cancelled' ? state : null;
      }
    } finally {
      s.busy.end(run.row.id, 'finishing');
    }
    if (done == null) return;
    // Also when a predecessor finished the run and its answer was lost: the predecessor may
    // have died before queueing the notification, and queueing twice is one notification.
    if (ended !== null) s.deps.notifications?.runEnded(s.token, run.row, ended);
    s.dropRun(run, ended ?? outcome);
    if (done) s.events.finished(run.row, outcome);
    await this.parts.starts.startQueued(run.row.dagId);
  }

  /**
   * Completes what a crashed leader, or a store write that failed half way, left undone:
   * waiting jobs whose trigger rule is already decided (all dependencies succeeded, or a
   * failure dooms them) but were never written, and runs whose jobs all ended but were
   * never finished. It works from the job states the store confirmed (the cache is
   * updated only after a write lands), so it is safe to run at any time.
   */
  async repair(run: MemRun): Promise<void> {
    const states = new Map<string, JobState>();
    for (const [taskId, jobId] of run.jobIdByTask) states.set(taskId, this.s.index.get(jobId)?.state ?? 'waiting');
    const machine = new RunMachine(run.spec, states);
    const settled = machine.settleAll();
    if (settled.ready.length + settled.upstreamFailed.length + settled.skipped.length > 0) {
      run.machine = machine;
      await this.settle(run, settled);
    }
    await this.maybeFinish(run);
  }
}
