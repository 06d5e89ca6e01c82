import type { JobId, RunId, WorkerId } from '../ids';
import type { JobRow, JobState, RunRow } from '../model';
import type { DagSpec } from '../spec';
import type { RunActionOutcome, RunActionRow, RunActionWrite } from '../store';
import { planRunAction } from '../run/actions';
import { RunMachine } from '../run/machine';
import { unlessUnavailable } from '../unavailable';
import type { LeaderParts } from './leader-parts';
import type { LeaderState, MemRun } from './leader-state';

/** A lease an action revoked: its holder should stop the job now rather than at its next renewal. */
export interface RevokedLease {
  jobId: JobId;
  fence: number;
  holder: WorkerId | null;
}

/** How many times an action is planned again when a job moved under it before it is left for the next reconciliation. */
const MAX_PLANS = 5;
/** How long to wait for a grant statement or a run's finish in flight before planning. */
const SETTLE_POLL_MS = 5;

const VERBS: Record<RunActionRow['kind'], string> = {
  cancel: 'cancelled',
  clear: 'cleared',
  retry_failed: 'retried from failure',
  mark_success: 'marked succeeded',
  mark_failed: 'marked failed',
};

/**
 * A leader's side of operator actions (docs/architecture.md, "Operator actions"). An
 * action is read from the store (told by a notice, or found pending on load and on each
 * reconciliation, so one whose leader crashed is applied by the next), planned from the
 * run's job states as the store has them, and written in one transaction under the
 * leader's epoch, conditional on every job still being in the state planned. The leader
 * then brings its memory in line and lets its repair step carry the run on: promoting
 * what a clear made runnable, marking what a failure dooms, finishing the run.
 *
 * Actions on one run are applied one at a time, in the order they were asked; while one
 * is written, dispatch grants nothing of that run, so no grant races the write.
 */
export class RunActions {
  private readonly chains = new Map<RunId, Promise<void>>();
  private readonly inFlight = new Set<string>();

  constructor(
    private readonly s: LeaderState,
    private readonly parts: Pick<LeaderParts, 'finish' | 'starts'>,
  ) {}

  /** Applies every action of the shard no leader has applied yet. */
  async applyPending(): Promise<void> {
    const { s } = this;
    const pending = await s.guard(() => s.deps.store.pendingRunActions(s.token)).catch(unlessUnavailable(null));
    await Promise.all((pending ?? []).map((action) => this.apply(action)));
  }

  /** Applies one action after those already queued for its run. */
  apply(action: RunActionRow): Promise<void> {
    if (this.inFlight.has(action.id)) return this.chains.get(action.runId) ?? Promise.resolve();
    this.inFlight.add(action.id);
    const before = this.chains.get(action.runId) ?? Promise.resolve();
    const next = before
      .then(() => this.applyNow(action))
      // An action the store could not take now stays pending: the next reconciliation
      // finds it again. Anything else is reported, and the action is still pending.
      .catch(unlessUnavailable(undefined))
      .catch((err: unknown) => this.s.deps.onError?.('run-action', err))
      .finally(() => {
        this.inFlight.delete(action.id);
        if (this.chains.get(action.runId) === next) this.chains.delete(action.runId);
      });
    this.chains.set(action.runId, next);
    return next;
  }

  private async applyNow(action: RunActionRow): Promise<void> {
    const { s } = this;
    s.busy.begin(action.runId, 'acting');
    try {
      for (let plan = 0; plan < MAX_PLANS && !s.deposed; plan++) {
        await this.settle(action.runId);
        const read = await s.deps.store.readRun(action.runId);
        if (!read) return;
        const spec = await s.specFor(read.run.dagId, read.run.dagVersion);
        if (!spec) return;
        const out = await s.guard(() => s.deps.store.applyRunAction(s.token, this.writeOf(action, read, spec)));
        if (out == null || out.kind === 'done') return;
        if (out.kind === 'conflict') continue;
        s.busy.end(action.runId, 'acting');
        await this.applied(action, read.run, out, spec);
        return;
      }
    } finally {
      s.busy.end(action.runId, 'acting');
    }
  }

  /** The plan of an action as the store should write it, from the run as just read. */
  private writeOf(action: RunActionRow, read: { run: RunRow; jobs: JobRow[] }, spec: DagSpec): RunActionWrite {
    const plan = planRunAction(
      spec,
      read.jobs.map((j) => ({ jobId: j.id, taskId: j.taskId, state: j.state })),
      action,
    );
    const note = `${VERBS[action.kind]} by ${action.requestedBy}${action.reason ? `: ${action.reason}` : ''}`;
    const changed = plan.changes.map((c) => ({ taskId: c.taskId, from: c.from, to: c.to }));
    const ended = read.run.state !== 'queued' && read.run.state !== 'running';
    const why = plan.changes.length > 0 || (plan.runState === 'cancelled' && !ended) ? undefined : nothingToDo(action, read.run);
    return {
      actionId: action.id,
      runId: action.runId,
      changes: plan.changes,
      runState: read.run.state === 'queued' && plan.runState === 'running' ? null : plan.runState,
      note,
      result: { changed, runState: read.run.state, ...(why ? { note: why } : {}) },
    };
  }

  /** Waits until no grant of the run's jobs and no finish of the run is in flight. */
  private async settle(runId: RunId): Promise<void> {
    const { s } = this;
    for (;;) {
      const run = s.runs.get(runId);
      const busy = s.busy.isBusy(runId, 'finishing') || (run !== undefined && s.busy.anyBusy(run.jobIdByTask.values(), 'granting'));
      if (!busy) return;
      await new Promise<void>((resolve) => s.deps.timers.after(SETTLE_POLL_MS, resolve));
    }
  }

  /** Brings memory in line with what the action wrote, and carries the run on. */
  private async applied(action: RunActionRow, before: RunRow, out: Extract<RunActionOutcome, { kind: 'applied' }>, spec: DagSpec): Promise<void> {
    const { s } = this;
    const run = out.run;
    const jobOf = new Map(out.jobs.map((j) => [j.taskId, j]));
    s.events.actionApplied(run, action, out.action.result);
    for (const c of out.action.result?.changed ?? []) s.events.jobActed(run, jobOf.get(c.taskId), c, action);
    for (const r of out.revoked) s.events.leaseRevoked(run, r, `${VERBS[action.kind]} by ${action.requestedBy}`, action.id);
    if (out.revoked.length > 0) s.deps.revoked?.(out.revoked);
    const mem = s.runs.get(run.id);
    if (run.state === 'running') {
      const next = mem ? this.refresh(mem, run, out.jobs, spec) : s.adoptRun(run, spec, out.jobs);
      await this.parts.finish.repair(next);
    } else if (run.state !== 'queued') {
      // A queued run an action left queued (a clear before it started) stays in the queue.
      if (mem) s.dropRun(mem, run.state);
      s.queue.remove(run.dagId, new Set([run.id]));
      if (run.state === 'cancelled' && before.state !== 'cancelled') {
        s.events.finished(run, 'cancelled');
      }
      await this.parts.starts.startQueued(run.dagId);
    }
    s.deps.kick();
  }

  /** Updates a run kept in memory, job by job, with the rows the action's write returned. */
  private refresh(mem: MemRun, row: RunRow, jobs: JobRow[], spec: DagSpec): MemRun {
    const { s } = this;
    const nowMs = s.deps.clock.nowMs();
    const states = new Map<string, JobState>();
    for (const j of jobs) {
      states.set(j.taskId, j.state);
      const job = s.index.get(j.id);
      if (!job) continue;
      job.fence = Math.max(job.fence, j.fence);
      job.holder = j.holder;
      job.nextAttemptAtMs = j.nextAttemptAt?.getTime() ?? 0;
      if (j.state === 'ready' && job.state !== 'ready') job.readyAtMs = nowMs;
      s.index.setState(job, j.state);
    }
    mem.row = row;
    mem.spec = spec;
    mem.machine = new RunMachine(spec, states);
    return mem;
  }
}

/** Why an action changed nothing, in words for the operator. */
function nothingToDo(action: RunActionRow, run: RunRow): string {
  if (run.state === 'queued') return 'the run has not started: there is nothing to act on yet';
  if (action.kind === 'cancel' && (action.taskIds.length === 0 || run.state !== 'running')) return `nothing to cancel: the run had already ended ${run.state}`;
  switch (action.kind) {
    case 'cancel':
      return 'nothing to cancel: the named tasks had already ended';
    case 'clear':
      return 'nothing to clear: the named tasks have not ended';
    case 'retry_failed':
      return 'nothing to retry: no task of the run failed';
    default:
      return `nothing to mark: the named tasks were already ${action.kind === 'mark_success' ? 'succeeded' : 'failed'}`;
  }
}
