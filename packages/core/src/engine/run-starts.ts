import { defaultRunParams } from '../dag/params';
import { jobsPerRunRefusal } from '../limits';
import type { DagId } from '../ids';
import type { RunRow } from '../model';
import type { CreatedRun, DueDag } from '../store';
import { initialJobs } from '../run/machine';
import { planTick } from '../schedule/tick';
import { isStoreUnavailable } from '../unavailable';
import type { LeaderParts } from './leader-parts';
import type { LeaderState } from './leader-state';

/**
 * A leader's run creation and starts: the runs of due slots, and queued runs started up
 * to each DAG's max active runs, one DAG at a time.
 */
export class RunStarts {
  /** DAGs a start was asked for while their starts were in flight: the loop goes round again. */
  private readonly again = new Set<DagId>();

  constructor(
    private readonly s: LeaderState,
    /** RunFinish finishes a run whose jobs all ended (a run of no runnable job ends as it starts). */
    private readonly parts: Pick<LeaderParts, 'finish'>,
  ) {}

  /**
   * Creates the runs of one due DAG (the node reads due DAGs for all its shards at once)
   * and returns how many it created. A single run of a DAG with room under its max active
   * runs and nothing queued ahead is created running, its jobs inserted in the same write;
   * anything else is queued, and starting it is the caller's next step (startQueued), so a
   * tick can read its next page of due DAGs meanwhile.
   */
  async createRuns(due: DueDag, nowMs: number): Promise<number> {
    const { s } = this;
    const dagId = due.id;
    s.specCache.set(`${dagId}@${due.version}`, due.spec);
    const plan = planTick({ schedule: due.spec.schedule, catchup: due.spec.catchup, nextRunAtMs: due.nextRunAt.getTime(), nowMs });
    const slots = plan.slotsMs.map((ms) => new Date(ms));
    const next = plan.nextRunAtMs == null ? null : new Date(plan.nextRunAtMs);
    // Starting in the creating write holds the DAG's start lock, so a trigger's start
    // cannot take the same room under max active runs meanwhile.
    // A run that can never start is created queued, and startQueued fails it with its reason.
    const roomToStart = slots.length === 1 && !s.busy.isBusy(dagId, 'starting') && !s.queue.hasDag(dagId) && s.activeRuns(dagId) < due.spec.maxActiveRuns;
    const jobs = roomToStart ? initialJobs(due.spec) : [];
    const startNow = roomToStart && jobsPerRunRefusal(jobs.length) === null;
    if (startNow) s.busy.begin(dagId, 'starting');
    let created: CreatedRun[] | null;
    try {
      const start = startNow ? { version: due.version, jobs } : undefined;
      // A scheduled run takes the defaults of the DAG's parameters.
      const params = due.spec.params ? defaultRunParams(due.spec.params) : undefined;
      created = await s.guard(() => s.writes.createRuns(s.token, { dagId, expectedNextRunAt: due.nextRunAt, slots, nextRunAt: next, start, params }));
      if (!created) return 0;
      for (const run of created) {
        const finishing = this.onCreated(run, due);
        if (finishing) await finishing;
      }
    } finally {
      if (startNow) s.busy.end(dagId, 'starting');
    }
    if (plan.skipped > 0) s.events.slotsSkipped(dagId, plan.skipped, due.spec.catchup.policy);
    // A start asked for while this write was out waited for it (see startQueued).
    // Nobody awaits it: an outage waits for the next reconciliation, anything else is reported.
    if (this.again.has(dagId)) void this.startQueued(dagId).catch((err) => isStoreUnavailable(err) || s.deps.onError?.('start-queued', err));
    return created.length;
  }

  /**
   * Takes up a run the creating write made: running with its jobs (returning the step that
   * finishes it if it has nothing to run), or queued. It returns that promise rather than
   * awaiting it, so the tick takes no more turns than the step itself.
   */
  private onCreated(run: CreatedRun, due: DueDag): Promise<void> | null {
    const { s } = this;
    s.events.created(run);
    if (run.state === 'running' && run.jobs && !s.deposed) {
      const { jobs, ...row } = run;
      const adopted = s.adoptRun(row, due.spec, jobs);
      s.events.started({ id: run.id, dagId: due.id }, jobs.length);
      return this.parts.finish.maybeFinish(adopted);
    }
    if (run.state === 'queued') s.queue.enqueue(run);
    return null;
  }

  /** A run queued by a trigger (told by a notice or found by reconciliation). */
  async adoptQueued(run: RunRow): Promise<void> {
    const { s } = this;
    if (s.runs.has(run.id) || run.state !== 'queued') return;
    if (s.queue.has(run)) return;
    s.queue.enqueue(run);
    await this.startQueued(run.dagId);
  }

  /** Starts queued runs of a DAG while it is under its max active runs. Serialised per DAG. */
  async startQueued(dagId: DagId): Promise<void> {
    const { s } = this;
    if (!s.busy.tryBegin(dagId, 'starting')) {
      this.again.add(dagId);
      return;
    }
    try {
      do {
        this.again.delete(dagId);
        // One loop, not a helper per run: each await here is a turn other steps interleave with.
        for (;;) {
          const next = s.queue.peek(dagId);
          if (!next || s.deposed) break;
          const spec = await s.specFor(next.dagId, next.dagVersion);
          if (!spec) break;
          // A run action may have taken this run off the queue while its spec was read: the
          // queue's head is then another run (or none), which the next turn looks at afresh.
          if (s.queue.peek(dagId) !== next) continue;
          if (s.activeRuns(dagId) >= spec.maxActiveRuns) break;
          s.queue.take(dagId);
          const jobs = initialJobs(spec);
          const refusal = jobsPerRunRefusal(jobs.length);
          if (refusal) {
            await this.failUnstartable(next, refusal);
            continue;
          }
          const rows = await s.guard(() => s.writes.startRun(s.token, { runId: next.id, jobs }));
          if (!rows) break;
          if (rows.length === 0) continue;
          const run = s.adoptRun({ ...next, state: 'running' as const }, spec, rows);
          s.events.started({ id: next.id, dagId }, rows.length);
          await this.parts.finish.maybeFinish(run);
        }
      } while (this.again.has(dagId));
    } finally {
      s.busy.end(dagId, 'starting');
      s.queue.dropIfEmpty(dagId);
    }
    s.deps.kick();
  }

  /**
   * Fails a queued run that can never start: its DAG version has more tasks than a run may
   * hold (a version stored before the limit was lowered, or written around the API). The
   * store refuses such a start, and as one item of a batch of starts or of a tick's
   * creations it would fail the whole batch, every time it was retried; failed, it says
   * why and lets the DAG's later runs start.
   */
  private async failUnstartable(run: RunRow, reason: string): Promise<void> {
    const { s } = this;
    const failed = await s.guard(() => s.writes.finishRun(s.token, { runId: run.id, state: 'failed' }));
    if (!failed) return;
    s.events.finished(run, 'failed', { reason });
  }
}
