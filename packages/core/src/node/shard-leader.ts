import type { Clock, Timers } from '../clock';
import { DeposedLeaderError } from '../errors';
import type { JobRow, JobState, RunRow } from '../model';
import { jobsPerRunRefusal, LIMITS } from '../limits';
import type { DagSpec } from '../spec';
import type { CreatedRun, DueDag, GrantedLease, LeaderStore, LeaderToken, NewEvent, SweptJob } from '../store';
import { initialJobs, isTerminalJobState, RunMachine } from '../run/machine';
import { planTick } from '../schedule/tick';
import { downstreamClosure, graphIndexOf } from '../dag/graph';
import type { DispatchDag, ReadyJob } from '../fairshare/plan';
import { LeaderWrites } from './leader-writes';
import { SpecCache } from './spec-cache';
import { sweepReason } from './revocation';

/**
 * DAG versions a leader keeps read (most recently used first). A shard of the mission's
 * 100,000 DAGs on 16 shards holds about 6,000; a version not kept is read again, in a
 * batch with others, when its DAG next runs.
 */
const SPECS_PER_SHARD = 1_000;

/** A job of an active run, as the leader keeps it in memory. */
interface MemJob {
  id: string;
  runId: string;
  dagId: string;
  taskId: string;
  state: JobState;
  priority: number;
  readyAtMs: number;
  nextAttemptAtMs: number;
  fence: number;
  holder: string | null;
  leasedAtMs: number;
}

interface MemRun {
  row: RunRow;
  spec: DagSpec;
  machine: RunMachine;
  jobIdByTask: Map<string, string>;
}

export interface LeaderDeps {
  store: LeaderStore;
  clock: Clock;
  timers: Timers;
  token: LeaderToken;
  emit: (event: NewEvent) => void;
  /** Asks the node to run a dispatch round soon (new ready jobs, freed leases). */
  kick: () => void;
  /** Called when the store says this leader was deposed. */
  onDeposed: (shard: number) => void;
  reconcileAfterMs: number;
  /**
   * How this leader's grant statement reaches the store; the node passes one that joins
   * the grants of all its leaders in a dispatch round into one statement.
   */
  grantLeases?: (token: LeaderToken, grants: { jobId: string; workerId: string }[], ttlMs: number) => Promise<GrantedLease[]>;
  /** The node's bulk leader writes, shared by all its leaders; a leader alone makes its own. */
  writes?: LeaderWrites;
  /**
   * Whether a worker has left the pool as the node sees it, for the reasons of revoked
   * leases; without it every holder counts as still in the pool.
   */
  holderGone?: (workerId: string | null) => boolean;
}

/**
 * The owner of one shard's DAG state. It creates runs from due slots, starts queued runs
 * up to each DAG's max active runs, keeps the ready queues and the per-DAG lease counts
 * the fair-share cap needs, reacts to finished jobs, and revokes expired leases. Memory
 * is a cache of the store: every write is conditional on the leader's epoch and on the
 * row's state, so a stale cache can only cause a refused write, never a wrong one.
 */
export class ShardLeader {
  readonly token: LeaderToken;
  private readonly runs = new Map<string, MemRun>();
  /** Active runs per DAG, for the max-active-runs check on every start. */
  private readonly runsByDag = new Map<string, Set<string>>();
  private readonly jobs = new Map<string, MemJob>();
  private readonly queued = new Map<string, RunRow[]>();
  private readonly ready = new Map<string, Map<string, MemJob>>();
  /** Ready jobs that may still be in their retry backoff: the only ones a wake-up is for. */
  private readonly backingOff = new Set<MemJob>();
  /** Jobs leased right now, per DAG: the fair-share count, kept as sets so it cannot drift. */
  private readonly leased = new Map<string, Set<string>>();
  private readonly capFraction = new Map<string, number | undefined>();
  private readonly specCache = new SpecCache(SPECS_PER_SHARD);
  private readonly starting = new Set<string>();
  /** Jobs whose grant statement is in flight: nothing may re-read them until it answers. */
  private readonly granting = new Set<string>();
  private readonly restart = new Set<string>();
  /** Runs whose finish write is in flight, so two job ends racing to finish a run write it once. */
  private readonly finishing = new Set<string>();
  private deposed = false;
  /** False until load() has rebuilt memory; the node neither ticks nor dispatches for it before. */
  loaded = false;
  // Every leader write that many jobs or runs make at once goes through a batcher: the
  // runs of a whole tick, the promotions after a batch of completions and the finished
  // runs share one statement (and one commit), for every shard the node leads.
  private readonly writes: LeaderWrites;

  constructor(private readonly deps: LeaderDeps) {
    this.token = deps.token;
    const { store, timers } = deps;
    this.writes = deps.writes ?? new LeaderWrites(store, timers);
  }

  get shard(): number {
    return this.token.shard;
  }

  isDeposed(): boolean {
    return this.deposed;
  }

  /** Rebuilds memory from the store, then finishes any step a crashed predecessor left half done. */
  async load(): Promise<void> {
    const snap = await this.guard(() => this.deps.store.loadShard(this.token));
    if (!snap) return;
    this.loaded = true;
    for (const [key, spec] of snap.versions) this.specCache.set(key, spec);
    const jobsByRun = new Map<string, JobRow[]>();
    for (const job of snap.jobs) {
      const list = jobsByRun.get(job.runId) ?? [];
      list.push(job);
      jobsByRun.set(job.runId, list);
    }
    for (const run of snap.runs) {
      const spec = this.specCache.get(`${run.dagId}@${run.dagVersion}`);
      if (!spec) continue;
      if (run.state === 'queued') this.enqueue(run);
      else this.adoptRun(run, spec, jobsByRun.get(run.id) ?? []);
    }
    for (const run of [...this.runs.values()]) await this.repair(run);
    for (const dagId of this.queued.keys()) await this.startQueued(dagId);
    this.deps.kick();
  }

  // ---- ticks ------------------------------------------------------------------

  /**
   * Creates the runs of one due DAG (the node reads due DAGs for all its shards at once)
   * and returns how many it created. A single run of a DAG with room under its max active
   * runs and nothing queued ahead is created running, its jobs inserted in the same write;
   * anything else is queued, and starting it is the caller's next step (startQueued), so a
   * tick can read its next page of due DAGs meanwhile.
   */
  async createRuns(due: DueDag, nowMs: number): Promise<number> {
    const dagId = due.id;
    this.specCache.set(`${dagId}@${due.version}`, due.spec);
    const plan = planTick({ schedule: due.spec.schedule, catchup: due.spec.catchup, nextRunAtMs: due.nextRunAt.getTime(), nowMs });
    const slots = plan.slotsMs.map((ms) => new Date(ms));
    const next = plan.nextRunAtMs == null ? null : new Date(plan.nextRunAtMs);
    // Starting in the creating write holds the DAG's start lock, so a trigger's start
    // cannot take the same room under max active runs meanwhile.
    // A run that can never start is created queued, and startQueued fails it with its reason.
    const roomToStart = slots.length === 1 && !this.starting.has(dagId) && !this.queued.has(dagId) && this.activeRuns(dagId) < due.spec.maxActiveRuns;
    const jobs = roomToStart ? initialJobs(due.spec) : [];
    const startNow = roomToStart && jobsPerRunRefusal(jobs.length) === null;
    if (startNow) this.starting.add(dagId);
    let created: CreatedRun[] | null;
    try {
      const start = startNow ? { version: due.version, jobs } : undefined;
      created = await this.guard(() => this.writes.createRuns(this.token, { dagId, expectedNextRunAt: due.nextRunAt, slots, nextRunAt: next, start }));
      if (!created) return 0;
      for (const run of created) {
        this.deps.emit({ type: 'run:created', shard: this.shard, dagId: run.dagId, runId: run.id, epoch: this.token.epoch, data: { scheduledAt: run.scheduledAt.toISOString(), trigger: run.trigger } });
        if (run.state === 'running' && run.jobs && !this.deposed) {
          const { jobs, ...row } = run;
          const adopted = this.adoptRun(row, due.spec, jobs);
          this.deps.emit({ type: 'run:started', shard: this.shard, dagId, runId: run.id, epoch: this.token.epoch, data: { jobs: jobs.length } });
          await this.maybeFinish(adopted);
        } else if (run.state === 'queued') {
          this.enqueue(run);
        }
      }
    } finally {
      if (startNow) this.starting.delete(dagId);
    }
    if (plan.skipped > 0) this.deps.emit({ type: 'run:created', shard: this.shard, dagId, data: { skippedSlots: plan.skipped, policy: due.spec.catchup.policy } });
    // A start asked for while this write was out waited for it (see startQueued).
    if (this.restart.has(dagId)) void this.startQueued(dagId).catch(() => undefined);
    return created.length;
  }

  /** A run queued by a trigger (told by a notice or found by reconciliation). */
  async adoptQueued(run: RunRow): Promise<void> {
    if (this.runs.has(run.id) || run.state !== 'queued') return;
    const list = this.queued.get(run.dagId) ?? [];
    if (list.some((r) => r.id === run.id)) return;
    this.enqueue(run);
    await this.startQueued(run.dagId);
  }

  /** Starts queued runs of a DAG while it is under its max active runs. Serialised per DAG. */
  async startQueued(dagId: string): Promise<void> {
    if (this.starting.has(dagId)) {
      this.restart.add(dagId);
      return;
    }
    this.starting.add(dagId);
    try {
      do {
        this.restart.delete(dagId);
        for (;;) {
          const next = this.queued.get(dagId)?.[0];
          if (!next || this.deposed) break;
          const spec = await this.specFor(next.dagId, next.dagVersion);
          if (!spec) break;
          if (this.activeRuns(dagId) >= spec.maxActiveRuns) break;
          this.queued.get(dagId)!.shift();
          const jobs = initialJobs(spec);
          const refusal = jobsPerRunRefusal(jobs.length);
          if (refusal) {
            await this.failUnstartable(next, refusal);
            continue;
          }
          const rows = await this.guard(() => this.writes.startRun(this.token, { runId: next.id, jobs }));
          if (!rows) break;
          if (rows.length === 0) continue;
          const started = { ...next, state: 'running' as const };
          const run = this.adoptRun(started, spec, rows);
          this.deps.emit({ type: 'run:started', shard: this.shard, dagId, runId: next.id, epoch: this.token.epoch, data: { jobs: rows.length } });
          await this.maybeFinish(run);
        }
      } while (this.restart.has(dagId));
    } finally {
      this.starting.delete(dagId);
      if ((this.queued.get(dagId)?.length ?? 0) === 0) this.queued.delete(dagId);
    }
    this.deps.kick();
  }

  /**
   * Fails a queued run that can never start: its DAG version has more tasks than a run may
   * hold (a version stored before the limit was lowered, or written around the API). The
   * store refuses such a start, and as one item of a batch of starts or of a tick's
   * creations it would fail the whole batch, every time it was retried; failed, it says
   * why and lets the DAG's later runs start.
   */
  private async failUnstartable(run: RunRow, reason: string): Promise<void> {
    const failed = await this.guard(() => this.writes.finishRun(this.token, { runId: run.id, state: 'failed' }));
    if (!failed) return;
    this.deps.emit({ type: 'run:finished', shard: this.shard, dagId: run.dagId, runId: run.id, epoch: this.token.epoch, data: { state: 'failed', reason } });
  }

  // ---- dispatch ----------------------------------------------------------------

  /** The fair-share view of this shard: ready jobs and held leases per DAG. */
  dispatchView(nowMs: number, capOf?: (capFraction: number | undefined) => number): DispatchDag[] {
    const out: DispatchDag[] = [];
    for (const [dagId, jobs] of this.ready) {
      // A DAG already at its cap can be granted nothing; skip copying its ready jobs.
      if (capOf && (this.leased.get(dagId)?.size ?? 0) >= capOf(this.capFraction.get(dagId))) continue;
      const ready: ReadyJob[] = [];
      for (const job of jobs.values()) if (job.nextAttemptAtMs <= nowMs) ready.push({ jobId: job.id, priority: job.priority, readyAtMs: job.readyAtMs });
      if (ready.length === 0) continue;
      out.push({ dagId, held: this.leased.get(dagId)?.size ?? 0, capFraction: this.capFraction.get(dagId), ready });
    }
    return out;
  }

  /** DAGs with ready jobs that hold their whole cap: they wait for fair share, not for workers. */
  cappedDags(capOf: (capFraction: number | undefined) => number): number {
    let n = 0;
    for (const dagId of this.ready.keys()) if ((this.leased.get(dagId)?.size ?? 0) >= capOf(this.capFraction.get(dagId))) n++;
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

  /** What a worker needs to run a job of an active run. */
  taskOf(runId: string, taskId: string): { type: string; config: Record<string, unknown>; timeoutMs: number } | null {
    const spec = this.runs.get(runId)?.spec;
    if (!spec) return null;
    const graph = graphIndexOf(spec);
    const i = graph.indexOf.get(taskId);
    const task = i === undefined ? undefined : spec.tasks[graph.positions[i]!];
    return task ? { type: task.type, config: task.config, timeoutMs: task.timeoutMs } : null;
  }

  /** Active runs and queued runs, for status pages. */
  summary(): { activeRuns: number; queuedRuns: number; ready: number; leased: number } {
    let queued = 0;
    for (const q of this.queued.values()) queued += q.length;
    return { activeRuns: this.runs.size, queuedRuns: queued, ready: this.readyCount(), leased: this.leasedCount() };
  }

  hasJob(jobId: string): boolean {
    return this.jobs.has(jobId);
  }

  /** Grants leases in one store statement and records them; returns what was granted. */
  async grant(grants: { jobId: string; workerId: string }[], ttlMs: number): Promise<GrantedLease[]> {
    // Take the jobs out of the ready queues first, so a concurrent round cannot pick them again.
    const taken: MemJob[] = [];
    for (const g of grants) {
      const job = this.jobs.get(g.jobId);
      if (!job || job.state !== 'ready') continue;
      this.setState(job, 'leased');
      job.leasedAtMs = this.deps.clock.nowMs();
      this.granting.add(job.id);
      taken.push(job);
    }
    const takenIds = new Set(taken.map((t) => t.id));
    let granted: GrantedLease[];
    try {
      const toGrant = grants.filter((g) => takenIds.has(g.jobId));
      const grantLeases = this.deps.grantLeases ?? ((token, list, ttl) => grantAlone(this.deps.store, token, list, ttl));
      granted = (await this.guard(() => grantLeases(this.token, toGrant, ttlMs))) ?? [];
    } catch (err) {
      for (const job of taken) this.granting.delete(job.id);
      // We cannot know whether the statement landed (the connection may have died after the
      // commit). Keep counting the jobs as held, so the cap stays exact, until a re-read of
      // each says otherwise; reconciliation retries the re-read if the store is still away.
      for (const job of taken) job.leasedAtMs = 0;
      await this.resyncMany(taken.map((job) => job.id)).catch(() => undefined);
      throw err;
    }
    for (const job of taken) this.granting.delete(job.id);
    const byId = new Map<string, GrantedLease>(granted.map((g) => [g.jobId, g]));
    const nowMs = this.deps.clock.nowMs();
    const refused: string[] = [];
    for (const job of taken) {
      const lease = byId.get(job.id);
      if (lease) {
        this.setState(job, 'leased');
        job.fence = lease.fence;
        job.holder = lease.workerId;
        job.leasedAtMs = nowMs;
        const run = this.runs.get(job.runId);
        // The machine tracks dependencies; a lease it already knows of (after a repair) is not news.
        if (run?.machine.state(job.taskId) === 'ready') run.machine.onLeased(job.taskId);
        this.deps.emit({ type: 'lease:granted', shard: this.shard, dagId: job.dagId, runId: job.runId, jobId: job.id, workerId: lease.workerId, fence: lease.fence, epoch: this.token.epoch, data: { attempt: lease.attempt } });
      } else {
        // The store refused: the job changed under us, its backoff has not passed by the
        // store's clock, or we were deposed. Put it back and re-read it.
        this.setState(job, 'ready');
        refused.push(job.id);
      }
    }
    if (refused.length > 0 && !this.deposed) await this.resyncMany(refused);
    // A later round re-plans the refused jobs (and arms a wake-up for any future backoff).
    if (refused.length > 0) this.deps.kick();
    return granted;
  }

  // ---- job ends ------------------------------------------------------------------

  /** Applies many job ends at once, so their follow-up writes share batches. */
  async jobsEnded(rows: Pick<JobRow, 'id' | 'state' | 'nextAttemptAt' | 'fence'>[]): Promise<void> {
    await Promise.all(rows.map((row) => this.jobEnded(row)));
  }

  /** Applies a job row the store returned after a completion, failure, hand-back or sweep. */
  async jobEnded(row: Pick<JobRow, 'id' | 'state' | 'nextAttemptAt' | 'fence'>): Promise<void> {
    const job = this.jobs.get(row.id);
    if (!job) return;
    const run = this.runs.get(job.runId);
    if (!run) return;
    if (job.state === row.state) {
      // Already known; a retry may only have moved its backoff.
      if (row.state === 'ready') {
        job.nextAttemptAtMs = row.nextAttemptAt?.getTime() ?? 0;
        if (job.nextAttemptAtMs > 0) this.backingOff.add(job);
      }
      return;
    }
    job.fence = Math.max(job.fence, row.fence);
    if (row.state === 'ready') {
      job.holder = null;
      job.nextAttemptAtMs = row.nextAttemptAt?.getTime() ?? 0;
      job.readyAtMs = this.deps.clock.nowMs();
      if (run.machine.state(job.taskId) === 'leased') run.machine.onRetry(job.taskId);
      this.setState(job, 'ready');
      this.deps.kick();
      return;
    }
    if (row.state === 'succeeded') {
      this.setState(job, 'succeeded');
      const { ready } = this.canEnd(run, job.taskId) ? run.machine.onSucceeded(job.taskId) : { ready: [] };
      await this.promote(run, ready);
    } else if (row.state === 'failed') {
      this.setState(job, 'failed');
      const { upstreamFailed } = this.canEnd(run, job.taskId) ? run.machine.onFailed(job.taskId) : { upstreamFailed: [] };
      await this.skip(run, upstreamFailed);
    } else {
      // Still leased (or waiting): nothing ended; keep the cache honest.
      this.setState(job, row.state);
      return;
    }
    await this.maybeFinish(run);
    this.deps.kick();
  }

  /** Revokes expired leases of this shard (rule 4). */
  async sweep(limit: number): Promise<SweptJob[]> {
    if (this.leasedCount() === 0) return [];
    const swept = (await this.guard(() => this.deps.store.sweepExpired(this.token, limit))) ?? [];
    for (const s of swept) {
      const holderGone = this.deps.holderGone?.(s.previousHolder) ?? false;
      const reason = sweepReason(s, holderGone);
      this.deps.emit({ type: 'lease:expired', shard: this.shard, dagId: s.dagId, runId: s.runId, jobId: s.jobId, workerId: s.previousHolder, fence: s.fence, epoch: this.token.epoch, data: { state: s.state, attemptCounted: s.attemptCounted, renewed: s.renewed, holderGone, reason } });
    }
    await this.jobsEnded(swept.map((s) => ({ id: s.jobId, state: s.state, nextAttemptAt: s.nextAttemptAt, fence: s.fence })));
    return swept;
  }

  /**
   * Re-reads jobs the cache believes leased for longer than a lease can live without a
   * renewal reaching this node; their end may have been written through another node
   * whose notice was lost.
   */
  async reconcile(): Promise<void> {
    const cutoff = this.deps.clock.nowMs() - this.deps.reconcileAfterMs;
    const stale: string[] = [];
    for (const job of this.jobs.values()) if (job.state === 'leased' && job.leasedAtMs < cutoff) stale.push(job.id);
    await this.resyncMany(stale);
    for (const run of [...this.runs.values()]) await this.repair(run);
    const queued = await this.guard(() => this.deps.store.queuedRuns(this.token));
    for (const run of queued ?? []) await this.adoptQueued(run);
    for (const dagId of [...this.queued.keys()]) await this.startQueued(dagId);
  }

  /**
   * Re-reads jobs the cache may be wrong about, together: the leases reconciliation
   * suspects (a node with thousands of five-minute jobs running used to send a query per
   * job each time), the jobs another node's notice says ended, and the jobs of a grant or
   * a promotion whose answer did not say what became of them. A job this leader changed while the read
   * was out is left alone: its row may predate that change, and whatever changed it
   * brought the cache up to date.
   */
  async resyncMany(jobIds: string[]): Promise<void> {
    for (let i = 0; i < jobIds.length; i += LIMITS.maxJobsPerRead) {
      const asked = new Map<string, { state: JobState; fence: number }>();
      for (const id of jobIds.slice(i, i + LIMITS.maxJobsPerRead)) {
        const job = this.jobs.get(id);
        if (job && !this.granting.has(id)) asked.set(id, { state: job.state, fence: job.fence });
      }
      if (asked.size === 0) continue;
      const rows = await this.deps.store.getJobs([...asked.keys()]).catch(() => null);
      for (const row of rows ?? []) {
        const job = this.jobs.get(row.id);
        const before = asked.get(row.id);
        if (job && before && job.state === before.state && job.fence === before.fence) await this.applyRead(row);
      }
    }
  }

  /** Brings the cached job in line with a row read from the store. */
  private async applyRead(row: JobRow): Promise<void> {
    const job = this.jobs.get(row.id);
    // A grant that started while we read answers for itself.
    if (!job || this.granting.has(row.id)) return;
    if (row.state === 'leased') {
      job.leasedAtMs = this.deps.clock.nowMs();
      this.setState(job, 'leased');
      job.fence = row.fence;
      job.holder = row.holder;
      return;
    }
    if (row.state === job.state) return;
    await this.jobEnded(row);
  }

  // ---- internals ------------------------------------------------------------------

  private async promote(run: MemRun, taskIds: string[]): Promise<void> {
    if (taskIds.length === 0) return;
    const ids = taskIds.map((t) => run.jobIdByTask.get(t)!).filter(Boolean);
    const flags = await this.guard(() => this.writes.promote(this.token, ids));
    if (flags == null) return;
    const moved = ids.filter((_, i) => flags[i]);
    const nowMs = this.deps.clock.nowMs();
    for (const id of moved) {
      const job = this.jobs.get(id);
      if (!job) continue;
      job.readyAtMs = nowMs;
      this.setState(job, 'ready');
    }
    // A job not moved was promoted already (by a write whose answer was lost); re-read it.
    const movedIds = new Set(moved);
    await this.resyncMany(ids.filter((id) => !movedIds.has(id)));
  }

  private async skip(run: MemRun, taskIds: string[]): Promise<void> {
    if (taskIds.length === 0) return;
    const ids = taskIds.map((t) => run.jobIdByTask.get(t)!).filter(Boolean);
    const flags = await this.guard(() => this.writes.skip(this.token, ids));
    for (const id of ids.filter((_, i) => flags?.[i])) {
      const job = this.jobs.get(id);
      if (!job) continue;
      this.setState(job, 'upstream_failed');
    }
  }

  private async maybeFinish(run: MemRun): Promise<void> {
    const outcome = run.machine.outcome();
    if (outcome === 'running' || this.finishing.has(run.row.id)) return;
    this.finishing.add(run.row.id);
    let done: boolean | null;
    try {
      done = await this.guard(() => this.writes.finishRun(this.token, { runId: run.row.id, state: outcome }));
    } finally {
      this.finishing.delete(run.row.id);
    }
    if (done == null) return;
    this.runs.delete(run.row.id);
    this.forgetRun(run.row);
    for (const jobId of run.jobIdByTask.values()) {
      const job = this.jobs.get(jobId);
      if (job) this.setState(job, 'cancelled');
      this.jobs.delete(jobId);
    }
    if (done) this.deps.emit({ type: 'run:finished', shard: this.shard, dagId: run.row.dagId, runId: run.row.id, epoch: this.token.epoch, data: { state: outcome } });
    await this.startQueued(run.row.dagId);
  }

  /**
   * Completes what a crashed leader, or a store write that failed half way, left undone:
   * jobs whose dependencies all succeeded but were never promoted, jobs downstream of a
   * failure never marked, and runs whose jobs all ended but were never finished. It works
   * from the job states the store confirmed (the cache is updated only after a write
   * lands), so it is safe to run at any time.
   */
  private async repair(run: MemRun): Promise<void> {
    const states = new Map<string, JobState>();
    for (const [taskId, jobId] of run.jobIdByTask) states.set(taskId, this.jobs.get(jobId)?.state ?? 'waiting');
    const promote: string[] = [];
    const skip = new Set<string>();
    for (const task of run.spec.tasks) {
      if (states.get(task.id) !== 'waiting') continue;
      const deps = task.dependsOn.map((d) => states.get(d));
      if (deps.some((s) => s === 'failed' || s === 'upstream_failed' || s === 'cancelled')) {
        for (const d of [task.id, ...downstreamClosure(run.spec, task.id)]) if (!isTerminalJobState(states.get(d)!) && states.get(d) !== 'leased') skip.add(d);
      } else if (deps.every((s) => s === 'succeeded')) promote.push(task.id);
    }
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

  /** A job can end in the machine only from ready or leased; anything else was already applied. */
  private canEnd(run: MemRun, taskId: string): boolean {
    const state = run.machine.state(taskId);
    return state === 'ready' || state === 'leased';
  }

  private adoptRun(row: RunRow, spec: DagSpec, jobs: JobRow[]): MemRun {
    const states = new Map<string, JobState>();
    for (const j of jobs) states.set(j.taskId, j.state);
    const run: MemRun = { row, spec, machine: new RunMachine(spec, states), jobIdByTask: new Map() };
    this.runs.set(row.id, run);
    let active = this.runsByDag.get(row.dagId);
    if (!active) this.runsByDag.set(row.dagId, (active = new Set()));
    active.add(row.id);
    this.capFraction.set(row.dagId, spec.capFraction);
    const nowMs = this.deps.clock.nowMs();
    for (const j of jobs) {
      run.jobIdByTask.set(j.taskId, j.id);
      const mem: MemJob = {
        id: j.id,
        runId: j.runId,
        dagId: j.dagId,
        taskId: j.taskId,
        state: j.state,
        priority: j.priority,
        readyAtMs: j.readyAt?.getTime() ?? nowMs,
        nextAttemptAtMs: j.nextAttemptAt?.getTime() ?? 0,
        fence: j.fence,
        holder: j.holder,
        leasedAtMs: j.leasedAt?.getTime() ?? nowMs,
      };
      this.jobs.set(j.id, mem);
      mem.state = 'waiting';
      this.setState(mem, j.state);
    }
    return run;
  }

  private enqueue(run: RunRow): void {
    const list = this.queued.get(run.dagId) ?? [];
    list.push(run);
    list.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    this.queued.set(run.dagId, list);
  }

  private activeRuns(dagId: string): number {
    return this.runsByDag.get(dagId)?.size ?? 0;
  }

  private forgetRun(row: RunRow): void {
    const active = this.runsByDag.get(row.dagId);
    active?.delete(row.id);
    if (active?.size === 0) {
      // A DAG with no active run has no job here either: what is kept per DAG goes with it,
      // or a leader would keep an entry for every DAG it ever ran.
      this.runsByDag.delete(row.dagId);
      this.capFraction.delete(row.dagId);
    }
  }

  private async specFor(dagId: string, version: number): Promise<DagSpec | null> {
    const key = `${dagId}@${version}`;
    const cached = this.specCache.get(key);
    if (cached) return cached;
    const spec = await this.writes.readSpec(dagId, version);
    if (spec) this.specCache.set(key, spec);
    return spec;
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

  /**
   * The one place a cached job changes state, so the ready queues and the leased sets
   * always agree with the job itself.
   */
  private setState(job: MemJob, state: JobState): void {
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

  /** Runs a leader write; a DeposedLeader refusal marks this leader deposed and yields null. */
  private async guard<T>(fn: () => Promise<T>): Promise<T | null> {
    if (this.deposed) return null;
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DeposedLeaderError) {
        this.deposed = true;
        this.deps.onDeposed(this.shard);
        return null;
      }
      throw err;
    }
  }
}

/** A leader's grant statement when no node joins it with others: the multi-leader form with one item. */
async function grantAlone(store: LeaderStore, token: LeaderToken, grants: { jobId: string; workerId: string }[], ttlMs: number): Promise<GrantedLease[]> {
  const [outcome] = await store.grantLeasesMany([{ token, grants }], ttlMs);
  if (outcome instanceof DeposedLeaderError) throw outcome;
  return outcome ?? [];
}
