import type { Clock, Timers } from '../clock';
import { DeposedLeaderError, FencelineError, InvalidInputError } from '../errors';
import { capFor, planDispatch, saltedHash } from '../fairshare/plan';
import type { JobId } from '../ids';
import type { JobRow, RunRow } from '../model';
import type { CompleteItem, GrantedLease, LeaderToken, LeaseRef, NewEvent, NodeStore, RenewOutcome, StoreNotice, WriteOutcome } from '../store';
import { Batcher } from './batcher';
import { DueRuns } from './due-runs';
import { LeaderWrites } from './leader-writes';
import { planShardShare } from './shard-share';
import { checkNodeConfig, DEFAULT_NODE_CONFIG, type NodeConfig } from './config';
import { NodeMetrics } from './metrics';
import { ShardLeader } from './shard-leader';
import { WorkerPool, type Assignment, type PollRequest } from './worker-pool';
import { RELEASE_REASONS, releaseReason, type ReleaseCause } from './revocation';

export interface NodeDeps {
  nodeId: string;
  store: NodeStore;
  clock: Clock;
  timers: Timers;
  config?: Partial<NodeConfig>;
  /** Every lifecycle event, for logs, at this node's own clock; the node also persists them to the store's event log. */
  onEvent?: (event: Omit<NewEvent, 'at'> & { at: number }) => void;
  /** Unexpected errors of background loops (they keep running). */
  onError?: (where: string, err: unknown) => void;
}

/**
 * One scheduler process's logic, bound to a store, a clock and timers. It contends for
 * every shard, leads those it wins, ticks and dispatches for them, and serves the worker
 * protocol (poll, renew, complete, fail, hand back). The HTTP server in apps/scheduler
 * and the simulator both drive this same class.
 */
export class SchedulerNode {
  readonly nodeId: string;
  readonly config: NodeConfig;
  readonly pool: WorkerPool;
  readonly metrics = new NodeMetrics();
  private readonly leaders = new Map<number, ShardLeader>();
  private readonly store: NodeStore;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly renewBatcher: Batcher<LeaseRef, RenewOutcome>;
  private readonly completeBatcher: Batcher<CompleteItem, WriteOutcome>;
  private readonly writes: LeaderWrites;
  private readonly grantBatcher: Batcher<{ token: LeaderToken; grants: { jobId: string; workerId: string }[] }, GrantedLease[] | DeposedLeaderError>;
  private readonly cancels: (() => void)[] = [];
  private unsubscribe: (() => Promise<void>) | null = null;
  private eventBuffer: NewEvent[] = [];
  private roundsInFlight = 0;
  private dispatchAgain = false;
  private dispatchScheduled = false;
  private retryTimer: { atMs: number; cancel: () => void } | null = null;
  private rotation = 0;
  /** This node's part of the planner's tie-break between equally free workers. */
  private readonly nodeSalt: number;
  private stopped = false;
  private readonly dueRuns: DueRuns;

  constructor(private readonly deps: NodeDeps) {
    this.nodeId = deps.nodeId;
    this.nodeSalt = saltedHash(deps.nodeId, 0);
    this.store = deps.store;
    this.clock = deps.clock;
    this.timers = deps.timers;
    this.config = checkNodeConfig({ ...DEFAULT_NODE_CONFIG, ...deps.config });
    this.pool = new WorkerPool(this.clock, this.timers, {
      liveWindowMs: this.config.workerLiveWindowMs,
      // A lease waiting in an outbox is not renewed (its worker does not know of it yet), so
      // it is handed back well before it could expire and cost the job an attempt.
      outboxHoldMs: Math.min(this.config.outboxHoldMs, Math.floor(this.config.leaseTtlMs / 3)),
      // Leases granted for a poll that was answered meanwhile wait for the worker's next
      // poll; a worker that does not come back (a full worker polls only once a slot frees)
      // gets them handed back rather than left to expire.
      onUnclaimed: (workerId, jobs) => {
        this.metrics.inc('leases_undelivered_total', jobs.length);
        for (const job of jobs) void this.handBack(job.jobId, job.fence, workerId, RELEASE_REASONS.unclaimed).catch(() => undefined);
      },
    });
    this.renewBatcher = new Batcher(this.timers, { windowMs: this.config.renewBatchWindowMs, maxBatch: 1000 }, (items) => this.store.renewLeases(items, this.config.leaseTtlMs));
    // Completions from every worker share a statement: while one batch commits, the next
    // gathers, so the batch size follows the load and an idle node answers at once.
    this.completeBatcher = new Batcher(this.timers, { windowMs: 0, maxBatch: 500, maxInFlight: 2 }, (items) => this.store.completeJobs(items));
    // The tick's run creations and starts, and promotions and finishes, of every shard this
    // node leads share one statement per step.
    this.writes = new LeaderWrites(this.store, this.timers);
    // A dispatch round asks every leader to grant at once; their statements become one.
    this.grantBatcher = new Batcher(this.timers, { windowMs: 0, maxBatch: 1024, maxInFlight: 4 }, (items) => this.store.grantLeasesMany(items, this.config.leaseTtlMs));
    this.dueRuns = new DueRuns({
      store: this.store,
      clock: this.clock,
      timers: this.timers,
      config: this.config,
      metrics: this.metrics,
      leaders: () => this.loadedLeaders(),
      leaderOf: (shard) => {
        const leader = this.leaders.get(shard);
        return leader && leader.loaded && !leader.isDeposed() ? leader : undefined;
      },
      onError: (where, err) => this.error(where, err),
    });
  }

  async start(): Promise<void> {
    const { shardCount } = await this.store.initCluster(this.config.shardCount);
    this.config.shardCount = shardCount;
    this.unsubscribe = await this.store.subscribe((n) => void this.onNotice(n).catch((e) => this.error('notice', e)));
    await this.contend();
    this.loop('renew-leadership', this.config.shardRenewIntervalMs, () => this.renewLeadership());
    this.loop('acquire-leadership', this.config.tickIntervalMs, () => this.contend());
    this.loop('tick', this.config.tickIntervalMs, () => this.dueRuns.tick());
    this.loop('sweep', this.config.sweepIntervalMs, () => this.sweep());
    this.loop('reconcile', this.config.reconcileIntervalMs, () => this.reconcile());
    this.loop('heartbeat', this.config.workerHeartbeatIntervalMs, () => this.heartbeat());
    this.loop('events', this.config.eventFlushIntervalMs, () => this.flushEvents());
    await this.dueRuns.tick();
  }

  /** Graceful stop: releases every shard so a standby takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const cancel of this.cancels) cancel();
    this.retryTimer?.cancel();
    this.dueRuns.stop();
    for (const w of this.pool.live()) this.pool.cancel(w.id);
    // Leave first: a node that still counted this one would take its shards only at the
    // grace, not on its next tick.
    await this.store.leaveCluster(this.nodeId).catch(() => undefined);
    for (const leader of [...this.leaders.values()]) await this.handOff(leader, 'stop');
    this.leaders.clear();
    await this.flushEvents().catch(() => undefined);
    await this.unsubscribe?.().catch(() => undefined);
  }

  ledShards(): number[] {
    return [...this.leaders.keys()].sort((a, b) => a - b);
  }

  leader(shard: number): ShardLeader | undefined {
    return this.leaders.get(shard);
  }

  // ---- leadership ----------------------------------------------------------------

  /**
   * Renews every shard this node leads, all at once, on its own loop: a slow takeover
   * elsewhere must never delay a renewal past the lease.
   */
  private async renewLeadership(): Promise<void> {
    await Promise.all(
      [...this.leaders.values()].map(async (leader) => {
        try {
          await this.store.renewShard(leader.token, this.config.shardLeaseTtlMs);
        } catch (err) {
          if (err instanceof DeposedLeaderError) this.depose(leader, 'renewal refused');
          else this.error('renew-leadership', err);
        }
      }),
    );
  }

  /**
   * Once a tick: stamps this node alive while workers poll it and takes the shards whose
   * lease ran out, every one of them or, with shareShards, as its share of them allows;
   * with shareShards it also gives shards up when another serving node is short of its
   * share (planShardShare). One read finds everything, so a standby takes over within the
   * shard lease TTL plus one tick, and a node that joins gets its share within a tick or two.
   */
  private async contend(): Promise<void> {
    if (this.stopped) return;
    // A node no worker polls could lead shards only for their jobs to wait.
    const serving = this.pool.poolSlots() > 0;
    const view = await this.store.contentionView({ nodeId: this.nodeId, liveWindowMs: this.nodeLiveWindowMs(), serving });
    if (this.stopped) return;
    const plan = planShardShare({
      nodeId: this.nodeId,
      serving,
      share: this.config.shareShards,
      shardCount: this.config.shardCount,
      led: [...this.leaders.keys()],
      shards: view.shards,
      nodes: view.nodes,
      nowMs: view.now.getTime(),
      graceMs: 3 * this.config.tickIntervalMs,
    });
    for (const shard of plan.acquire) {
      if (this.leaders.has(shard) || this.stopped) continue;
      const got = await this.store.acquireShard({ shard, nodeId: this.nodeId, ttlMs: this.config.shardLeaseTtlMs });
      if (got) this.lead(got.token, got.previousHolder, got.reason);
    }
    for (const shard of plan.release) {
      const leader = this.leaders.get(shard);
      if (leader && !this.stopped) await this.handOff(leader, 'share');
    }
  }

  /**
   * A node counts as alive while it stamped itself within three ticks. Short, so a crashed
   * node stops counting well before its shard leases run out and the survivors' shares
   * already include its shards when they come free.
   */
  private nodeLiveWindowMs(): number {
    return Math.max(1, 3 * this.config.tickIntervalMs);
  }

  /**
   * Stops leading a shard and releases its lease at once, so another node takes it on its
   * next tick. The leader's writes still in flight are refused by the store's epoch check
   * once the shard changes hands; jobs already leased run on untouched.
   */
  private async handOff(leader: ShardLeader, reason: string): Promise<void> {
    if (this.leaders.get(leader.shard) === leader) this.leaders.delete(leader.shard);
    this.metrics.inc('leader_handoffs_total');
    await this.store.releaseShard(leader.token).catch((e) => this.error('release', e));
    this.emit({ type: 'leader:released', shard: leader.shard, epoch: leader.token.epoch, nodeId: this.nodeId, data: { reason } });
  }

  /** Starts leading a shard; its state loads in the background while renewals go on. */
  private lead(token: LeaderToken, previousHolder: string | null, reason: string): void {
    const leader = new ShardLeader({
      store: this.store,
      clock: this.clock,
      timers: this.timers,
      token,
      emit: (e) => this.emit(e),
      kick: () => this.kick(),
      // Only this leader: after a hand-off the shard may be led again by a newer leader here.
      onDeposed: () => this.depose(leader, 'write refused'),
      reconcileAfterMs: this.config.leaseTtlMs + this.config.renewIntervalMs,
      writes: this.writes,
      // A holder that held its lease and lived would have been heard from within every
      // renewal interval; one silent for longer than the TTL less that interval has gone.
      holderGone: (workerId) => workerId === null || this.pool.silentMs(workerId) > this.config.leaseTtlMs - this.config.renewIntervalMs,
      onError: (where, err) => this.error(where, err),
      grantLeases: async (t, grants) => {
        const outcome = await this.grantBatcher.submit({ token: t, grants });
        if (outcome instanceof Error) throw outcome;
        return outcome;
      },
    });
    this.leaders.set(token.shard, leader);
    this.metrics.inc('leader_elections_total');
    this.emit({ type: 'leader:elected', shard: token.shard, epoch: token.epoch, nodeId: this.nodeId, data: { previousHolder, reason } });
    leader.load().catch((err) => {
      // Without its state a leader can do nothing useful: give the shard up so this node
      // or another takes it over afresh.
      this.error('load', err);
      if (this.leaders.get(token.shard) === leader) this.leaders.delete(token.shard);
      void this.store.releaseShard(token).catch(() => undefined);
    });
  }

  /** The store's clock as this node estimates it (offset measured on every tick). */
  storeNowMs(): number {
    return this.dueRuns.storeNowMs();
  }

  private hasReadyWork(): boolean {
    return this.loadedLeaders().some((l) => l.readyCount() > 0);
  }

  private loadedLeaders(): ShardLeader[] {
    return [...this.leaders.values()].filter((l) => l.loaded && !l.isDeposed());
  }

  private depose(leader: ShardLeader, why: string): void {
    const shard = leader.shard;
    if (this.leaders.get(shard) !== leader) return;
    this.leaders.delete(shard);
    this.metrics.inc('leader_deposed_total');
    this.emit({ type: 'leader:deposed', shard, epoch: leader.token.epoch, nodeId: this.nodeId, data: { why } });
  }

  // ---- sweeps, reconciliation (the tick is DueRuns) ------------------------------------

  private async sweep(): Promise<void> {
    for (const leader of this.loadedLeaders()) {
      const swept = await leader.sweep(1000);
      this.metrics.inc('leases_expired_total', swept.length);
    }
  }

  private async reconcile(): Promise<void> {
    for (const leader of this.loadedLeaders()) await leader.reconcile();
    for (const gone of this.pool.expire()) this.emit({ type: 'worker:gone', workerId: gone, nodeId: this.nodeId });
  }

  private async heartbeat(): Promise<void> {
    const ids = this.pool.live().map((w) => w.id);
    // A row this node or another refreshed less than `skip` ago is left alone. It is then
    // at most skip + one interval old when it is next written, which must stay inside the
    // live window the console reads it with; short windows (tests) skip nothing.
    const interval = this.config.workerHeartbeatIntervalMs;
    const skip = Math.max(0, Math.min(interval, this.config.workerLiveWindowMs - 2 * interval));
    if (ids.length > 0) await this.store.heartbeatWorkers(ids, this.nodeId, skip);
  }

  private async onNotice(n: StoreNotice): Promise<void> {
    const leader = this.leaders.get(n.shard);
    if (!leader) return;
    if (n.kind === 'run-queued') {
      // The notice carries the run; reading it back is only for senders that leave it out.
      const at = n.scheduledAt ? new Date(n.scheduledAt) : null;
      const run: RunRow =
        n.dagId && n.dagVersion && at && !Number.isNaN(at.getTime())
          ? { id: n.runId, dagId: n.dagId, dagVersion: n.dagVersion, shard: n.shard, scheduledAt: at, trigger: 'manual', state: 'queued', createdAt: at, startedAt: null, endedAt: null }
          : await this.store.getRun(n.runId);
      await leader.adoptQueued(run);
    } else if (n.kind === 'job-ended') {
      await leader.resyncMany((n.jobIds ?? [n.jobId]).filter((id) => leader.hasJob(id)));
    }
  }

  // ---- dispatch -------------------------------------------------------------------

  /** Requests a dispatch round on the next turn. */
  kick(): void {
    if (this.stopped || this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    this.timers.after(0, () => {
      this.dispatchScheduled = false;
      this.dispatch();
    });
  }

  /**
   * Starts a round unless dispatchRoundsInFlight are out already, in which case one more
   * runs when one of them ends. Rounds may overlap: a round takes its jobs out of the
   * ready queues and reserves its workers' slots before its grant statement goes out, so
   * the next round plans only what is left.
   */
  private dispatch(): void {
    if (this.stopped) return;
    if (this.roundsInFlight >= this.config.dispatchRoundsInFlight) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatchAgain = false;
    this.roundsInFlight++;
    const startedMs = this.clock.nowMs();
    void this.dispatchRound()
      .catch((e) => this.error('dispatch', e))
      .finally(() => {
        this.roundsInFlight--;
        this.metrics.inc('dispatch_rounds_total');
        this.metrics.inc('dispatch_round_ms_total', this.clock.nowMs() - startedMs);
        if (this.dispatchAgain) this.dispatch();
      });
  }

  private async dispatchRound(): Promise<void> {
    // Backoffs were set by the store's clock, so they are compared with it.
    const nowMs = this.storeNowMs();
    this.scheduleRetryWakeup(nowMs);
    // Rounds are asked for on every job end; most find nothing ready, and then the fleet
    // need not be looked at at all.
    if (!this.hasReadyWork()) {
      this.metrics.set('dags_capped', 0);
      return;
    }
    if (!this.pool.hasWaiters()) return;
    const dagShard = new Map<string, ShardLeader>();
    const dags = [];
    const poolSlots = this.pool.poolSlots();
    const capOf = (fraction: number | undefined): number => capFor(poolSlots, fraction ?? this.config.capFraction);
    for (const leader of this.loadedLeaders()) {
      for (const view of leader.dispatchView(nowMs, capOf)) {
        dagShard.set(view.dagId, leader);
        dags.push(view);
      }
    }
    const cappedBefore = this.loadedLeaders().reduce((n, l) => n + l.cappedDags(capOf), 0);
    this.metrics.set('dags_capped', cappedBefore);
    if (dags.length === 0) return;
    const rotation = this.rotation++;
    // Ties between equally free workers go differently on each node and in each round, so
    // the nodes do not all pick the same idle workers (each double fill is a hand-back).
    const tieSalt = (this.nodeSalt + Math.imul(rotation, 0x9e3779b1)) | 0;
    // The round can grant at most this many jobs, so it needs at most this many workers:
    // the pool picks them in the planner's own order without listing the whole fleet.
    let grantable = 0;
    for (const d of dags) grantable += Math.min(d.ready.length, Math.max(0, capOf(d.capFraction) - d.held));
    const workers = this.pool.bestWaiting(grantable, tieSalt);
    if (workers.length === 0) return;
    const plan = planDispatch({ dags, poolSlots, workers, capFraction: this.config.capFraction, rotation, tieSalt });
    this.metrics.set('dags_capped', cappedBefore + plan.capped.length);
    if (plan.grants.length === 0) return;
    const byLeader = new Map<ShardLeader, { jobId: string; workerId: string }[]>();
    const planned = new Map<string, number>();
    for (const g of plan.grants) {
      const leader = dagShard.get(g.dagId)!;
      const list = byLeader.get(leader) ?? [];
      list.push({ jobId: g.jobId, workerId: g.workerId });
      byLeader.set(leader, list);
      planned.set(g.workerId, (planned.get(g.workerId) ?? 0) + 1);
    }
    for (const [workerId, n] of planned) this.pool.reserve(workerId, n);
    const grantStartedMs = this.clock.nowMs();
    let results: { leader: ShardLeader; granted: GrantedLease[] }[];
    try {
      results = await Promise.all([...byLeader].map(async ([leader, grants]) => ({ leader, granted: await leader.grant(grants, this.config.leaseTtlMs) })));
    } catch (err) {
      for (const [workerId, n] of planned) this.pool.settle(workerId, n, []);
      throw err;
    }
    this.metrics.inc('dispatch_grant_ms_total', this.clock.nowMs() - grantStartedMs);
    const perWorker = new Map<string, Assignment[]>();
    for (const { leader, granted } of results) {
      for (const lease of granted) {
        const list = perWorker.get(lease.workerId) ?? [];
        list.push({
          jobId: lease.jobId,
          runId: lease.runId,
          dagId: lease.dagId,
          taskId: lease.taskId,
          attempt: lease.attempt,
          fence: lease.fence,
          leaseTtlMs: this.config.leaseTtlMs,
          renewIntervalMs: this.config.renewIntervalMs,
          task: leader.taskOf(lease.runId, lease.taskId) ?? { type: 'unknown', config: {}, timeoutMs: 0 },
        });
        perWorker.set(lease.workerId, list);
      }
    }
    this.metrics.inc('leases_granted_total', [...perWorker.values()].reduce((n, l) => n + l.length, 0));
    for (const [workerId, n] of planned) {
      const jobs = perWorker.get(workerId) ?? [];
      if (this.pool.settle(workerId, n, jobs)) continue;
      this.metrics.inc('leases_undelivered_total', jobs.length);
      // The worker left the pool between the plan and the grant: hand the leases back.
      for (const job of jobs) await this.handBack(job.jobId, job.fence, workerId, RELEASE_REASONS.leftPool);
    }
  }

  private scheduleRetryWakeup(nowMs: number): void {
    let next: number | null = null;
    for (const l of this.leaders.values()) {
      const t = l.nextRetryAtMs(nowMs);
      if (t != null && (next == null || t < next)) next = t;
    }
    if (next == null || (this.retryTimer && this.retryTimer.atMs <= next && this.retryTimer.atMs > nowMs)) return;
    this.retryTimer?.cancel();
    const cancel = this.timers.after(next - nowMs, () => {
      this.retryTimer = null;
      this.kick();
    });
    this.retryTimer = { atMs: next, cancel };
  }

  // ---- the worker protocol -------------------------------------------------------------

  register(workerId: string, slots: number, meta: Record<string, unknown> = {}): Promise<{ nodeId: string; leaseTtlMs: number; renewIntervalMs: number; pollWaitMs: number }> {
    if (!Number.isInteger(slots) || slots < 1 || slots > 10_000) throw new InvalidInputError(`slots must be an integer from 1 to 10000, got ${slots}`);
    this.pool.touch(workerId, slots);
    this.emit({ type: 'worker:registered', workerId, nodeId: this.nodeId, data: { slots } });
    return this.store
      .registerWorker({ id: workerId, slots, nodeId: this.nodeId, meta })
      .then(() => ({ nodeId: this.nodeId, leaseTtlMs: this.config.leaseTtlMs, renewIntervalMs: this.config.renewIntervalMs, pollWaitMs: this.config.pollWaitMs }));
  }

  /**
   * Long poll: answered the moment a lease is granted to this worker, or empty after
   * `waitMs` (at most the node's pollWaitMs, which is also the default).
   */
  poll(poll: Omit<PollRequest, 'waitMs'> & { waitMs?: number }, cancelled?: { onCancel(fn: () => void): void }): Promise<Assignment[]> {
    const waitMs = Math.min(poll.waitMs ?? this.config.pollWaitMs, this.config.pollWaitMs);
    // A new waiter matters only if some leader has work to hand out; new work kicks a round itself.
    return this.pool.wait({ ...poll, waitMs }, () => this.hasReadyWork() && this.kick(), cancelled);
  }

  cancelPoll(workerId: string): void {
    this.pool.cancel(workerId);
  }

  /** Renewals of many workers share one store statement per batching window. */
  renew(workerId: string, leases: { jobId: string; fence: number }[]): Promise<RenewOutcome[]> {
    return this.renewMany(leases.map((l) => ({ ...l, workerId })));
  }

  /**
   * Renewals of leases held by many worker identities, for a process that hosts many of
   * them and renews them in one request; each lease is still checked against its own holder.
   */
  async renewMany(refs: LeaseRef[]): Promise<RenewOutcome[]> {
    for (const ref of refs) this.pool.seen(ref.workerId);
    const outcomes = await this.renewBatcher.submitMany(refs);
    outcomes.forEach((o, i) => {
      const ref = refs[i]!;
      if (o.ok) {
        this.metrics.inc('renewals_total');
        // Renewals go to the event log too (in the same batched flush as every event), so
        // the console can draw each attempt's renewals on the run timeline.
        this.emit({ type: 'lease:renewed', jobId: o.jobId, workerId: ref.workerId, fence: ref.fence, data: { leaseExpiresAt: o.leaseExpiresAt.toISOString() } });
      } else this.refused(o.code, { jobId: o.jobId, workerId: ref.workerId, op: 'renew' });
    });
    return outcomes;
  }

  async complete(workerId: string, input: { jobId: string; fence: number; output?: unknown; logs?: string | null }): Promise<JobRow> {
    const [outcome] = await this.completeMany(workerId, [input]);
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.row;
  }

  /**
   * Several results of one worker in one call. Each is fenced on its own and answered on
   * its own: an accepted result's row, or its typed refusal. The worker is answered once
   * the results are durable; the leaders' follow-up (readiness downstream, finished runs)
   * runs after, since it is theirs to finish and repair, not the worker's to wait for.
   */
  async completeMany(workerId: string, items: { jobId: string; fence: number; output?: unknown; logs?: string | null }[]): Promise<WriteOutcome[]> {
    this.pool.seen(workerId);
    const outcomes = await this.completeBatcher.submitMany(items.map((i) => ({ ref: { jobId: i.jobId, fence: i.fence, workerId }, output: i.output, logs: i.logs ?? null })));
    const ended: JobRow[] = [];
    for (const o of outcomes) {
      if (o.ok) {
        const row = o.row;
        this.metrics.inc('jobs_succeeded_total');
        this.emit({ type: 'job:succeeded', shard: row.shard, dagId: row.dagId, runId: row.runId, jobId: row.id, workerId, fence: row.fence, nodeId: this.nodeId });
        ended.push(row);
      } else if (o.error.code !== 'INVALID_INPUT') this.refused(o.error.code, { jobId: o.jobId, workerId, op: 'complete', ...o.error.details });
    }
    // Each result frees a slot of the worker: a poll it has open here may now take that
    // many more jobs, without the worker having to poll again to say so.
    if (this.pool.credit(workerId, items.length) && this.hasReadyWork()) this.kick();
    void this.afterJobsEnd(ended);
    return outcomes;
  }

  async fail(workerId: string, input: { jobId: string; fence: number; error: string; retryable?: boolean; logs?: string | null }): Promise<JobRow> {
    this.pool.seen(workerId);
    const row = await this.fenced('fail', workerId, input.jobId, () =>
      this.store.failJob({ jobId: input.jobId, fence: input.fence, workerId }, { error: input.error, retryable: input.retryable ?? true, logs: input.logs ?? null }),
    );
    this.metrics.inc(row.state === 'failed' ? 'jobs_failed_total' : 'jobs_retried_total');
    this.pool.credit(workerId, 1);
    this.emit({ type: row.state === 'failed' ? 'job:failed' : 'job:retrying', shard: row.shard, dagId: row.dagId, runId: row.runId, jobId: row.id, workerId, fence: row.fence, nodeId: this.nodeId, data: { error: input.error.slice(0, 500), nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null } });
    await this.afterJobEnd(row);
    return row;
  }

  async release(workerId: string, input: { jobId: string; fence: number; reason?: ReleaseCause }): Promise<JobRow> {
    this.pool.seen(workerId);
    const row = await this.handBack(input.jobId, input.fence, workerId, releaseReason(input.reason));
    this.pool.credit(workerId, 1);
    return row;
  }

  private async handBack(jobId: string, fence: number, workerId: string, reason: string): Promise<JobRow> {
    const row = await this.fenced('release', workerId, jobId, () => this.store.releaseJob({ jobId, fence, workerId }));
    this.emit({ type: 'lease:released', shard: row.shard, dagId: row.dagId, runId: row.runId, jobId, workerId, fence: row.fence, nodeId: this.nodeId, data: { reason } });
    await this.afterJobEnd(row);
    return row;
  }

  /** The shard's leader reacts in memory; if another node leads it, that node is told. */
  private async afterJobEnd(row: JobRow): Promise<void> {
    await this.afterJobsEnd([row]);
  }

  private async afterJobsEnd(rows: JobRow[]): Promise<void> {
    // The workers' writes have landed; a failure from here on is the leader's to repair
    // (its reconciliation re-reads the run), not the worker's to retry.
    const local = new Map<ShardLeader, JobRow[]>();
    const remote: JobRow[] = [];
    for (const row of rows) {
      const leader = this.leaders.get(row.shard);
      if (!leader?.hasJob(row.id)) remote.push(row);
      else if (local.has(leader)) local.get(leader)!.push(row);
      else local.set(leader, [row]);
    }
    await Promise.all([
      ...[...local].map(([leader, ended]) => leader.jobsEnded(ended).catch((err) => this.error('after-job-end', err))),
      ...endedNotices(remote).map((notice) => this.store.notify(notice).catch((err) => this.error('after-job-end', err))),
    ]);
  }

  private async fenced<T>(op: string, workerId: string, jobId: string, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (err instanceof FencelineError && err.code !== 'INVALID_INPUT') this.refused(err.code, { jobId, workerId, op, ...err.details });
      throw err;
    }
  }

  private refused(code: string, data: Record<string, unknown>): void {
    this.metrics.inc(`writes_refused_total{reason="${code}"}`);
    this.emit({ type: 'write:fenced', jobId: String(data.jobId ?? ''), workerId: String(data.workerId ?? ''), nodeId: this.nodeId, data: { reason: code, ...data } });
  }

  // ---- plumbing ---------------------------------------------------------------------------

  /**
   * Buffers an event stamped now by the store's clock (as this node estimates it): the
   * buffer is written every eventFlushIntervalMs, and the console draws run timelines from
   * these stamps, which must say when things happened, not when the batch was written.
   */
  emit(event: NewEvent): void {
    const withNode = { nodeId: this.nodeId, at: new Date(this.storeNowMs()), ...event };
    this.eventBuffer.push(withNode);
    this.deps.onEvent?.({ ...withNode, at: this.clock.nowMs() });
  }

  private async flushEvents(): Promise<void> {
    if (this.eventBuffer.length === 0) return;
    const batch = this.eventBuffer.splice(0, this.eventBuffer.length);
    await this.store.appendEvents(batch);
  }

  /** Runs `fn` every `everyMs`, never overlapping itself, reporting errors and carrying on. */
  private loop(name: string, everyMs: number, fn: () => Promise<void>): void {
    let cancel: () => void = () => undefined;
    const run = (): void => {
      if (this.stopped) return;
      fn()
        .catch((e) => this.error(name, e))
        .finally(() => {
          if (!this.stopped) cancel = this.timers.after(everyMs, run);
        });
    };
    cancel = this.timers.after(everyMs, run);
    this.cancels.push(() => cancel());
  }

  private error(where: string, err: unknown): void {
    this.metrics.inc(`loop_errors_total{loop="${where}"}`);
    this.deps.onError?.(where, err);
  }
}

/**
 * Job ends another node's leader must hear of, one notice per shard and per
 * NOTICE_JOB_IDS jobs: after a failover, every result for a job delivered by the old
 * leader comes through this node, and a notice (and a read on the far side) per job was a
 * store round trip per job. NOTIFY payloads are limited to 8,000 bytes; 200 ids of up to
 * 19 digits stay well inside it.
 */
const NOTICE_JOB_IDS = 200;

export function endedNotices(rows: Pick<JobRow, 'id' | 'shard'>[]): StoreNotice[] {
  const byShard = new Map<number, JobId[]>();
  for (const row of rows) {
    const ids = byShard.get(row.shard);
    if (ids) ids.push(row.id);
    else byShard.set(row.shard, [row.id]);
  }
  const notices: StoreNotice[] = [];
  for (const [shard, ids] of byShard) {
    for (let i = 0; i < ids.length; i += NOTICE_JOB_IDS) {
      const part = ids.slice(i, i + NOTICE_JOB_IDS);
      notices.push({ kind: 'job-ended', shard, jobId: part[0]!, jobIds: part });
    }
  }
  return notices;
}
