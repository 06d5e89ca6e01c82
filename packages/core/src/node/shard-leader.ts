import { assert } from '../assert';
import { DeposedLeaderError } from '../errors';
import type { DagId, JobId } from '../ids';
import { defaultRunParams, type RunParams } from '../dag/params';
import type { BackfillRow, JobRow, RunRow } from '../model';
import type { DueDag, Grant, GrantedLease, LeaderStore, LeaderToken, SweptJob } from '../store';
import { graphIndexOf } from '../dag/graph';
import { unlessUnavailable } from '../unavailable';
import { BackfillSteps } from './backfill-steps';
import type { MemJob, PoolDispatchDag } from './job-index';
import { LeaderState, type LeaderDeps, type MemRun } from './leader-state';
import { LeaderSync, type EndedRow } from './leader-sync';
import { RunFinish } from './run-finish';
import { RunStarts } from './run-starts';
import { RunActions } from './run-actions';

export type { LeaderDeps } from './leader-state';

/**
 * The owner of one shard's DAG state. It creates runs from due slots, starts queued runs
 * up to each DAG's max active runs, keeps the ready queues and the per-DAG lease counts
 * the fair-share cap needs, reacts to finished jobs, and revokes expired leases. Memory
 * is a cache of the store: every write is conditional on the leader's epoch and on the
 * row's state, so a stale cache can only cause a refused write, never a wrong one.
 *
 * Its parts: the state it keeps (LeaderState, with the jobs filed by state in a
 * JobIndex), run creation and starts (RunStarts), the steps after jobs end (RunFinish),
 * the sweep and reconciliation with the store (LeaderSync), and its backfills
 * (BackfillSteps). This class loads the shard, grants leases and applies job ends, and
 * is what the node talks to.
 */
export class ShardLeader {
  readonly token: LeaderToken;
  /** False until load() has rebuilt memory; the node neither ticks nor dispatches for it before. */
  loaded = false;
  private readonly s: LeaderState;
  private readonly starts: RunStarts;
  private readonly finish: RunFinish;
  private readonly sync: LeaderSync;
  private readonly actions: RunActions;
  private readonly backfills: BackfillSteps;

  constructor(deps: LeaderDeps) {
    this.token = deps.token;
    const s = (this.s = new LeaderState(deps));
    // Each part reaches the others through these arrows, which hand back the part's own
    // promise: a wrapper that awaited it would add turns and reorder concurrent steps.
    this.starts = new RunStarts(s, { maybeFinish: (run) => this.finish.maybeFinish(run) });
    this.finish = new RunFinish(s, { startQueued: (dagId) => this.starts.startQueued(dagId), resyncMany: (ids) => this.sync.resyncMany(ids) });
    this.sync = new LeaderSync(s, {
      jobEnded: (row) => this.jobEnded(row),
      jobsEnded: (rows) => this.jobsEnded(rows),
      repair: (run) => this.finish.repair(run),
      adoptQueued: (run) => this.starts.adoptQueued(run),
      startQueued: (dagId) => this.starts.startQueued(dagId),
      applyPendingActions: () => this.actions.applyPending(),
    });
    this.actions = new RunActions(s, { repair: (run) => this.finish.repair(run), startQueued: (dagId) => this.starts.startQueued(dagId) });
    this.backfills = new BackfillSteps(s, {
      startQueued: (dagId) => this.starts.startQueued(dagId),
      cancelRunning: () => this.cancelRunningRuns(),
      applyActions: () => this.actions.applyPending(),
    });
  }

  get shard(): number {
    return this.token.shard;
  }

  isDeposed(): boolean {
    return this.s.deposed;
  }

  /** Rebuilds memory from the store, then finishes any step a crashed predecessor left half done. */
  async load(): Promise<void> {
    const { s } = this;
    const snap = await s.guard(() => s.deps.store.loadShard(this.token));
    if (!snap) return;
    this.loaded = true;
    for (const [key, spec] of snap.versions) s.specCache.set(key, spec);
    const jobsByRun = new Map<string, JobRow[]>();
    for (const job of snap.jobs) {
      const list = jobsByRun.get(job.runId) ?? [];
      list.push(job);
      jobsByRun.set(job.runId, list);
    }
    for (const run of snap.runs) {
      const spec = s.specCache.get(`${run.dagId}@${run.dagVersion}`);
      if (!spec) continue;
      if (run.state === 'queued') s.queue.enqueue(run);
      else s.adoptRun(run, spec, jobsByRun.get(run.id) ?? []);
    }
    for (const run of [...s.runs.values()]) await this.finish.repair(run);
    for (const dagId of s.queue.dagIds()) await this.starts.startQueued(dagId);
    // Actions a predecessor was told of but did not write are this leader's now.
    await this.actions.applyPending();
    // A predecessor may have died between a failure and queueing its notification; the
    // store's dedupe key makes queueing again harmless.
    const notifications = s.deps.notifications;
    if (notifications) {
      notifications.loaded(this.token);
      for (const job of snap.jobs) if (job.state === 'failed') notifications.taskFailed(this.token, { id: job.id, runId: job.runId, dagId: job.dagId, taskId: job.taskId });
    }
    s.deps.kick();
  }

  // ---- operator actions (RunActions) ------------------------------------------------------

  /** Applies the shard's pending operator actions (told by a notice, or on reconciliation). */
  applyPendingActions(): Promise<void> {
    return this.actions.applyPending();
  }

  // ---- runs (RunStarts) ----------------------------------------------------------------

  /** Creates the runs of one due DAG and returns how many it created (RunStarts.createRuns). */
  createRuns(due: DueDag, nowMs: number): Promise<number> {
    return this.starts.createRuns(due, nowMs);
  }

  /** A run queued by a trigger (told by a notice or found by reconciliation). */
  adoptQueued(run: RunRow): Promise<void> {
    return this.starts.adoptQueued(run);
  }

  /** Starts queued runs of a DAG while it is under its max active runs. Serialised per DAG. */
  startQueued(dagId: DagId): Promise<void> {
    return this.starts.startQueued(dagId);
  }

  // ---- backfills (BackfillSteps) ---------------------------------------------------------

  /** One pass over an open backfill of this shard: create its next runs, or settle it once cancelled. */
  advanceBackfill(backfill: BackfillRow): Promise<void> {
    return this.backfills.advance(backfill);
  }

  /**
   * A cancelled backfill's running runs: its settle stored a pending cancel for each, in
   * the same transaction, and they are applied now as operator actions.
   */
  private cancelRunningRuns(): Promise<void> {
    return this.actions.applyPending();
  }

  // ---- dispatch ----------------------------------------------------------------

  /** The fair-share view of this shard: ready jobs and held leases per DAG. */
  dispatchView(nowMs: number, capOf?: (capFraction: number | undefined, pool: string) => number): PoolDispatchDag<JobId>[] {
    return this.s.index.dispatchView(nowMs, capOf);
  }

  /** DAGs with ready jobs that hold their whole cap: they wait for fair share, not for workers. */
  cappedDags(capOf: (capFraction: number | undefined, pool: string) => number): number {
    return this.s.index.cappedDags(capOf);
  }

  /** The earliest future retry time, so the node can wake up for it. */
  nextRetryAtMs(nowMs: number): number | null {
    return this.s.index.nextRetryAtMs(nowMs);
  }

  heldByDag(): Map<string, number> {
    return this.s.index.heldByDag();
  }

  hasLimitedReady(): boolean {
    return this.s.index.hasLimitedReady();
  }

  readyCount(): number {
    return this.s.index.readyCount();
  }

  leasedCount(): number {
    return this.s.index.leasedCount();
  }

  /** What a worker needs to run a job of an active run. */
  taskOf(runId: string, taskId: string): { type: string; config: Record<string, unknown>; timeoutMs: number; dependsOn: string[] } | null {
    const spec = this.s.runs.get(runId)?.spec;
    if (!spec) return null;
    const graph = graphIndexOf(spec);
    const i = graph.indexOf.get(taskId);
    const task = i === undefined ? undefined : spec.tasks[graph.positions[i]!];
    return task ? { type: task.type, config: task.config, timeoutMs: task.timeoutMs, dependsOn: task.dependsOn } : null;
  }

  /**
   * The resolved parameters of an active run, which every job of it is handed with its
   * lease. A run stored without the defaults (a backfill's) still gets them from the version
   * it pinned; a value stored with the run wins.
   */
  paramsOf(runId: string): RunParams {
    const run = this.s.runs.get(runId);
    if (!run) return {};
    return run.spec.params ? { ...defaultRunParams(run.spec.params), ...run.row.params } : run.row.params;
  }

  /** Active runs and queued runs, for status pages. */
  summary(): { activeRuns: number; queuedRuns: number; ready: number; leased: number } {
    return { activeRuns: this.s.runs.size, queuedRuns: this.s.queue.size(), ready: this.readyCount(), leased: this.leasedCount() };
  }

  hasJob(jobId: JobId): boolean {
    return this.s.index.has(jobId);
  }

  /** Grants leases in one store statement and records them; returns what was granted. */
  async grant(grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
    const { s } = this;
    // Take the jobs out of the ready queues first, so a concurrent round cannot pick them again.
    const taken: MemJob[] = [];
    for (const g of grants) {
      const job = s.index.get(g.jobId);
      // While an operator action on its run is written, a job is not granted: the write is
      // conditional on the states it planned from, and a grant would only make it plan again.
      if (!job || job.state !== 'ready' || s.busy.isBusy(job.runId, 'acting')) continue;
      s.index.setState(job, 'leased');
      job.leasedAtMs = s.deps.clock.nowMs();
      s.busy.begin(job.id, 'granting');
      taken.push(job);
    }
    const takenIds = new Set(taken.map((t) => t.id));
    let granted: GrantedLease[];
    try {
      // A job that consumes resource limits is flagged, so the store grants it under the limits' lock.
      const toGrant = grants.filter((g) => takenIds.has(g.jobId)).map((g) => (s.index.get(g.jobId)?.resources ? { ...g, limited: true } : g));
      const grantLeases = s.deps.grantLeases ?? ((token, list, ttl) => grantAlone(s.deps.store, token, list, ttl));
      granted = (await s.guard(() => grantLeases(this.token, toGrant, ttlMs))) ?? [];
    } catch (err) {
      for (const job of taken) s.busy.end(job.id, 'granting');
      // We cannot know whether the statement landed (the connection may have died after the
      // commit). Keep counting the jobs as held, so the cap stays exact, until a re-read of
      // each says otherwise; reconciliation retries the re-read if the store is still away.
      for (const job of taken) job.leasedAtMs = 0;
      await this.sync.resyncMany(taken.map((job) => job.id)).catch(unlessUnavailable(undefined));
      throw err;
    }
    for (const job of taken) s.busy.end(job.id, 'granting');
    const refused = this.recordGrants(taken, granted);
    if (refused.length > 0 && !s.deposed) await this.sync.resyncMany(refused);
    // A later round re-plans the refused jobs (and arms a wake-up for any future backoff).
    if (refused.length > 0) s.deps.kick();
    return granted;
  }

  /** Marks the taken jobs the store granted as leased and puts the others back; returns those. */
  private recordGrants(taken: MemJob[], granted: GrantedLease[]): JobId[] {
    const { s } = this;
    const byId = new Map<string, GrantedLease>(granted.map((g) => [g.jobId, g]));
    const nowMs = s.deps.clock.nowMs();
    const refused: JobId[] = [];
    for (const job of taken) {
      const lease = byId.get(job.id);
      // A job whose run an action ended while the grant was out left the index with it.
      if (!s.index.has(job.id)) continue;
      if (lease) {
        s.index.setState(job, 'leased');
        job.fence = lease.fence;
        job.holder = lease.workerId;
        job.leasedAtMs = nowMs;
        const run = s.runs.get(job.runId);
        // The machine tracks dependencies; a lease it already knows of (after a repair) is not news.
        if (run?.machine.state(job.taskId) === 'ready') run.machine.onLeased(job.taskId);
        s.deps.traces?.attemptLeased(job, lease, this.shard);
        s.events.leaseGranted(job, lease);
      } else {
        // The store refused: the job changed under us, its backoff has not passed by the
        // store's clock, or we were deposed. Put it back and re-read it.
        s.index.setState(job, 'ready');
        refused.push(job.id);
      }
    }
    return refused;
  }

  // ---- job ends ------------------------------------------------------------------

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
      s.deps.traces?.attemptReady(job, this.shard);
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
    if (row.state === 'failed') s.deps.notifications?.taskFailed(this.token, { id: job.id, runId: job.runId, dagId: job.dagId, taskId: job.taskId });
    await this.finish.maybeFinish(run);
    s.deps.kick();
  }

  /**
   * Records a job's success or failure and returns the run's next step, promotions or
   * skips. It hands back that step's own promise rather than awaiting it: an async wrapper
   * would add turns and reorder the leader's concurrent steps.
   */
  private applyEnd(run: MemRun, job: MemJob, state: 'succeeded' | 'failed'): Promise<void> {
    this.s.index.setState(job, state);
    if (!canEnd(run, job.taskId)) return this.finish.settle(run, { ready: [], upstreamFailed: [], skipped: [] });
    const settled = state === 'succeeded' ? run.machine.onSucceeded(job.taskId) : run.machine.onFailed(job.taskId);
    return this.finish.settle(run, settled);
  }

  // ---- sweeps and reconciliation (LeaderSync) ------------------------------------------

  /** Revokes expired leases of this shard (rule 4). */
  sweep(limit: number): Promise<SweptJob[]> {
    return this.sync.sweep(limit);
  }

  /** Re-reads what memory may be wrong about, repairs runs and takes up queued runs. */
  reconcile(): Promise<void> {
    return this.sync.reconcile();
  }

  /** Re-reads jobs the cache may be wrong about, together (LeaderSync.resyncMany). */
  resyncMany(jobIds: JobId[]): Promise<void> {
    return this.sync.resyncMany(jobIds);
  }
}

/** A job can end in the machine only from ready or leased; anything else was already applied. */
function canEnd(run: MemRun, taskId: string): boolean {
  const state = run.machine.state(taskId);
  return state === 'ready' || state === 'leased';
}

/** A leader's grant statement when no node joins it with others: the multi-leader form with one item. */
async function grantAlone(store: LeaderStore, token: LeaderToken, grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
  const [outcome] = await store.grantLeasesMany([{ token, grants }], ttlMs);
  if (outcome instanceof DeposedLeaderError) throw outcome;
  return outcome ?? [];
}
