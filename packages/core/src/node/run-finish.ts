import type { DagId, JobId } from '../ids';
import type { JobState } from '../model';
import { isTerminalJobState, RunMachine } from '../run/machine';
import { downstreamClosure } from '../dag/graph';
import type { LeaderState, MemRun } from './leader-state';

/** What carrying runs forward needs from the rest of the leader. */
export interface FinishSteps {
  startQueued(dagId: DagId): Promise<void>;
  resyncMany(jobIds: JobId[]): Promise<void>;
}

/**
 * A leader's steps after jobs end: promoting the jobs whose dependencies all succeeded,
 * marking those downstream of a failure, and finishing runs whose jobs all ended, plus
 * the repair that completes these steps when a crash or a failed write left them undone.
 */
export class RunFinish {
  constructor(
    private readonly s: LeaderState,
    private readonly steps: FinishSteps,
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
    }
    // A job not moved was promoted already (by a write whose answer was lost); re-read it.
    const movedIds = new Set(moved);
    await this.steps.resyncMany(ids.filter((id) => !movedIds.has(id)));
  }

  async skip(run: MemRun, taskIds: string[]): Promise<void> {
    const { s } = this;
    if (taskIds.length === 0) return;
    const ids = taskIds.map((t) => run.jobIdByTask.get(t)!).filter(Boolean);
    const flags = await s.guard(() => s.writes.skip(s.token, ids));
    for (const id of ids.filter((_, i) => flags?.[i])) {
      const job = s.index.get(id);
      if (!job) continue;
      s.index.setState(job, 'upstream_failed');
    }
  }

  async maybeFinish(run: MemRun): Promise<void> {
    const { s } = this;
    const outcome = run.machine.outcome();
    if (outcome === 'running' || s.finishing.has(run.row.id)) return;
    s.finishing.add(run.row.id);
    let done: boolean | null;
    try {
      done = await s.guard(() => s.writes.finishRun(s.token, { runId: run.row.id, state: outcome }));
    } finally {
      s.finishing.delete(run.row.id);
    }
    if (done == null) return;
    s.dropRun(run);
    if (done) s.deps.emit({ type: 'run:finished', shard: s.shard, dagId: run.row.dagId, runId: run.row.id, epoch: s.token.epoch, data: { state: outcome } });
    await this.steps.startQueued(run.row.dagId);
  }

  /**
   * Completes what a crashed leader, or a store write that failed half way, left undone:
   * jobs whose dependencies all succeeded but were never promoted, jobs downstream of a
   * failure never marked, and runs whose jobs all ended but were never finished. It works
   * from the job states the store confirmed (the cache is updated only after a write
   * lands), so it is safe to run at any time.
   */
  async repair(run: MemRun): Promise<void> {
    const states = new Map<string, JobState>();
    for (const [taskId, jobId] of run.jobIdByTask) states.set(taskId, this.s.index.get(jobId)?.state ?? 'waiting');
    const { promote, skip } = undoneSteps(run, states);
    if (promote.length > 0 || skip.size > 0) {
      const next = new Map(states);
      for (const t of promote) next.set(t, 'ready');
      for (const t of skip) next.set(t, 'upstream_failed');
      run.machine = new RunMachine(run.spec, next);
      await this.promote(run, promote);
      await this.skip(run, [...skip]);
    }
    await this.maybeFinish(run);
  }
}

/** The waiting tasks whose dependencies all succeeded, and those a failure upstream dooms. */
function undoneSteps(run: MemRun, states: Map<string, JobState>): { promote: string[]; skip: Set<string> } {
  const promote: string[] = [];
  const skip = new Set<string>();
  for (const task of run.spec.tasks) {
    if (states.get(task.id) !== 'waiting') continue;
    const deps = task.dependsOn.map((d) => states.get(d));
    if (deps.some((st) => st === 'failed' || st === 'upstream_failed' || st === 'cancelled')) {
      for (const d of [task.id, ...downstreamClosure(run.spec, task.id)]) if (!isTerminalJobState(states.get(d)!) && states.get(d) !== 'leased') skip.add(d);
    } else if (deps.every((st) => st === 'succeeded')) promote.push(task.id);
  }
  return { promote, skip };
}
