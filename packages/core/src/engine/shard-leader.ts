import { defaultRunParams, type RunParams } from '../dag/params';
import type { DagId, JobId } from '../ids';
import type { BackfillRow, JobRow, RunRow } from '../model';
import type { DueDag, Grant, GrantedLease, LeaderToken, SweptJob } from '../store';
import { graphIndexOf } from '../dag/graph';
import { BackfillSteps } from './backfill-steps';
import type { PoolDispatchDag } from './job-index';
import { JobEnds, type EndedRow } from './job-ends';
import type { LeaderParts } from './leader-parts';
import { LeaderState, type LeaderDeps } from './leader-state';
import { LeaderSync } from './leader-sync';
import { LeaseGrants } from './lease-grants';
import { RunActions } from './run-actions';
import { RunFinish } from './run-finish';
import { RunStarts } from './run-starts';

export type { LeaderDeps } from './leader-state';

/**
 * The owner of one shard's DAG state. It creates runs from due slots, starts queued runs
 * up to each DAG's max active runs, keeps the ready queues and the per-DAG lease counts
 * the fair-share cap needs, reacts to finished jobs, and revokes expired leases. Memory
 * is a cache of the store: every write is conditional on the leader's epoch and on the
 * row's state, so a stale cache can only cause a refused write, never a wrong one.
 *
 * Its parts: the state it keeps (LeaderState, with the jobs filed by state in a
 * JobIndex, the queued runs in a RunQueue, the steps in flight in a BusyGuard, and the
 * events it tells built by RunEvents), run creation and starts (RunStarts), lease grants
 * (LeaseGrants), job ends (JobEnds), the steps after jobs end (RunFinish), the sweep and
 * the re-reads of jobs (LeaderSync), operator actions (RunActions) and its backfills
 * (BackfillSteps). The parts call each other directly (LeaderParts). This class makes
 * them, runs the steps that take several (loading the shard, reconciling it), and is what
 * the node talks to.
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
  private readonly ends: JobEnds;
  private readonly grants: LeaseGrants;
  private readonly backfills: BackfillSteps;

  constructor(deps: LeaderDeps) {
    this.token = deps.token;
    const s = (this.s = new LeaderState(deps));
    // Filled in here, before any step runs: each part calls the others through it when a
    // step hands on, and such a call hands back the callee's own promise (a wrapper that
    // awaited it would add turns and reorder concurrent steps).
    const parts = {} as LeaderParts;
    this.starts = parts.starts = new RunStarts(s, parts);
    this.finish = parts.finish = new RunFinish(s, parts);
    this.sync = parts.sync = new LeaderSync(s, parts);
    this.ends = parts.ends = new JobEnds(s, parts);
    this.actions = parts.actions = new RunActions(s, parts);
    this.grants = new LeaseGrants(s, parts);
    this.backfills = new BackfillSteps(s, parts);
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

  /** Grants leases in one store statement and records them; returns what was granted (LeaseGrants.grant). */
  grant(grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
    return this.grants.grant(grants, ttlMs);
  }

  // ---- job ends (JobEnds) ------------------------------------------------------------

  /** Applies many job ends at once, so their follow-up writes share batches. */
  jobsEnded(rows: EndedRow[]): Promise<void> {
    return this.ends.jobsEnded(rows);
  }

  // ---- sweeps and reconciliation (LeaderSync) ------------------------------------------

  /** Revokes expired leases of this shard (rule 4). */
  sweep(limit: number): Promise<SweptJob[]> {
    return this.sync.sweep(limit);
  }

  /**
   * Re-reads what memory may be wrong about, repairs runs, takes up queued runs whose
   * notice was lost, and applies the actions no leader applied. The jobs re-read are those
   * the cache believes leased for longer than a lease can live without a renewal reaching
   * this node: their end may have been written through another node whose notice was lost.
   */
  async reconcile(): Promise<void> {
    const { s } = this;
    const cutoff = s.deps.clock.nowMs() - s.deps.reconcileAfterMs;
    await this.sync.resyncMany(s.index.leasedBefore(cutoff));
    for (const run of [...s.runs.values()]) await this.finish.repair(run);
    const queued = await s.guard(() => s.deps.store.queuedRuns(s.token));
    for (const run of queued ?? []) await this.starts.adoptQueued(run);
    for (const dagId of [...s.queue.dagIds()]) await this.starts.startQueued(dagId);
    await this.actions.applyPending();
  }

  /** Re-reads jobs the cache may be wrong about, together (LeaderSync.resyncMany). */
  resyncMany(jobIds: JobId[]): Promise<void> {
    return this.sync.resyncMany(jobIds);
  }
}
