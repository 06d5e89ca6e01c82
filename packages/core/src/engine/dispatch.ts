import { assert } from '../assert';
import { capFor, planDispatch, saltedHash, type DispatchDag, type DispatchPlan } from '../fairshare/plan';
import type { JobRow } from '../model';
import type { JobId, WorkerId } from '../ids';
import { reserveOf, type LendCheck } from '../fairshare/lend-check';
import type { Grant, GrantedLease } from '../store';
import type { NodeContext } from './node-context';
import { RELEASE_REASONS } from './revocation';
import type { ShardLeader } from './shard-leader';
import type { Assignment } from './worker-pool';
import { keysFit } from '../routing/offer';

/**
 * How long a pool lends nothing on a node after the store refused one of its loans: long
 * enough for the results and grants the node's view missed to land (a few milliseconds to
 * a batch window), short beside a job, so the borrowing DAG loses little.
 */
const LEND_PAUSE_MS = 250;

/** What dispatch needs from the rest of the node. */
export interface DispatchDeps {
  /** The leaders that may act (loaded, not deposed). */
  loadedLeaders(): ShardLeader[];
  /** Every leader, for the retry wake-up. */
  allLeaders(): Iterable<ShardLeader>;
  /** The store's clock as the node estimates it: backoffs were set by it. */
  storeNowMs(): number;
  /** Hands a lease back for a worker that left the pool between the plan and the grant. */
  handBack(jobId: JobId, fence: number, workerId: WorkerId, reason: string): Promise<JobRow>;
}

/**
 * A node's dispatch rounds: on a kick, the fair-share plan over every shard it leads and
 * the waiting workers, the grants of all its leaders in one statement, and the leases
 * handed to the workers' open polls; plus the wake-up for the earliest retry backoff.
 */
export class Dispatcher {
  private roundsInFlight = 0;
  private dispatchAgain = false;
  private dispatchScheduled = false;
  private retryTimer: { atMs: number; cancel: () => void } | null = null;
  private rotation = 0;
  /** This node's part of the planner's tie-break between equally free workers. */
  private readonly nodeSalt: number;
  /** Per pool, until when it lends nothing here: the store refused a loan (see noteRefusedLends). */
  private readonly lendPausedUntilMs = new Map<string, number>();

  constructor(
    private readonly c: NodeContext,
    private readonly d: DispatchDeps,
  ) {
    this.nodeSalt = saltedHash(c.nodeId, 0);
  }

  /** Whether some leader has a ready job: only then is a round worth its cost. */
  hasReadyWork(): boolean {
    return this.d.loadedLeaders().some((l) => l.readyCount() > 0);
  }

  /** Requests a dispatch round on the next turn. */
  kick(): void {
    if (this.c.stopped() || this.dispatchScheduled) return;
    this.dispatchScheduled = true;
    this.c.timers.after(0, () => {
      this.dispatchScheduled = false;
      this.dispatch();
    });
  }

  stop(): void {
    this.retryTimer?.cancel();
  }

  /**
   * Starts a round unless dispatchRoundsInFlight are out already, in which case one more
   * runs when one of them ends. Rounds may overlap: a round takes its jobs out of the
   * ready queues and reserves its workers' slots before its grant statement goes out, so
   * the next round plans only what is left.
   */
  private dispatch(): void {
    const { c } = this;
    if (c.stopped()) return;
    if (this.roundsInFlight >= c.config.dispatchRoundsInFlight) {
      this.dispatchAgain = true;
      return;
    }
    this.dispatchAgain = false;
    this.roundsInFlight++;
    const startedMs = c.clock.nowMs();
    void this.dispatchRound()
      .catch((e) => c.error('dispatch', e))
      .finally(() => {
        this.roundsInFlight--;
        c.metrics.inc('dispatch_rounds_total');
        c.metrics.inc('dispatch_round_ms_total', c.clock.nowMs() - startedMs);
        if (this.dispatchAgain) this.dispatch();
      });
  }

  private async dispatchRound(): Promise<void> {
    const { c } = this;
    // Units of resource limits are shared by every node, so their use is read from the store,
    // and only for a round that has a limited job to plan; the store refuses a grant that
    // would overflow whatever this read said.
    const limitsFree = this.d.loadedLeaders().some((l) => l.hasLimitedReady()) ? await this.limitsFree() : undefined;
    const plan = this.planRound(limitsFree);
    if (!plan) return;
    const { byLeader, planned } = this.groupGrants(plan.plan, plan.dagShard, plan.checks);
    for (const [workerId, n] of planned) c.pool.reserve(workerId, n);
    const grantStartedMs = c.clock.nowMs();
    let results: { leader: ShardLeader; granted: GrantedLease[] }[];
    try {
      results = await Promise.all([...byLeader].map(async ([leader, grants]) => ({ leader, granted: await leader.grant(grants, c.config.leaseTtlMs) })));
    } catch (err) {
      for (const [workerId, n] of planned) c.pool.settle(workerId, n, []);
      throw err;
    }
    c.metrics.inc('dispatch_grant_ms_total', c.clock.nowMs() - grantStartedMs);
    if (plan.checks.size > 0) this.noteRefusedLends(plan.plan, plan.checks, results);
    const perWorker = this.assignments(results);
    c.metrics.inc(
      'leases_granted_total',
      [...perWorker.values()].reduce((n, l) => n + l.length, 0),
    );
    for (const [workerId, n] of planned) {
      const jobs = perWorker.get(workerId) ?? [];
      if (c.pool.settle(workerId, n, jobs)) continue;
      c.metrics.inc('leases_undelivered_total', jobs.length);
      // The worker left the pool between the plan and the grant: hand the leases back.
      for (const job of jobs) await this.d.handBack(job.jobId, job.fence, workerId, RELEASE_REASONS.leftPool);
    }
  }

  /** The round's fair-share plan, or null when it has nothing to grant. */
  private async limitsFree(): Promise<Map<string, number>> {
    const use = await this.c.store.resourceUse();
    return new Map(use.map((l) => [l.name, Math.max(0, l.capacity - l.used)]));
  }

  /**
   * After a round that lent: a lent grant the store refused means this node's view of the
   * pool is ahead of the store's records (results still in flight, another node's grants),
   * so the pool lends nothing more here until LEND_PAUSE_MS have passed; without the pause
   * every round until the view caught up would plan the same loans and be refused again.
   */
  private noteRefusedLends(plan: DispatchPlan<JobId, WorkerId>, checks: Map<string, LendCheck>, results: { granted: GrantedLease[] }[]): void {
    const granted = new Set<string>();
    for (const r of results) for (const lease of r.granted) granted.add(lease.jobId);
    for (const g of plan.grants) {
      const pool = checks.get(g.jobId)?.pool;
      if (!g.lent || pool === undefined || granted.has(g.jobId)) continue;
      this.c.metrics.inc('lends_refused_total');
      this.lendPausedUntilMs.set(pool, this.c.clock.nowMs() + LEND_PAUSE_MS);
    }
  }

  private lendPaused(pool: string): boolean {
    const until = this.lendPausedUntilMs.get(pool);
    if (until === undefined) return false;
    if (until > this.c.clock.nowMs()) return true;
    this.lendPausedUntilMs.delete(pool);
    return false;
  }

  private planRound(limitsFree?: Map<string, number>): { plan: DispatchPlan<JobId, WorkerId>; dagShard: Map<string, ShardLeader>; checks: Map<string, LendCheck> } | null {
    const { c } = this;
    // Backoffs were set by the store's clock, so they are compared with it.
    const nowMs = this.d.storeNowMs();
    this.scheduleRetryWakeup(nowMs);
    // Rounds are asked for on every job end; most find nothing ready, and then the fleet
    // need not be looked at at all.
    if (!this.hasReadyWork()) {
      c.metrics.set('dags_capped', 0);
      return null;
    }
    if (!c.pool.hasWaiters()) return null;
    const capOf = (fraction: number | undefined, pool: string): number => capFor(c.pool.poolSlots(pool), fraction ?? c.config.capFraction);
    const lendReserve = c.config.lendReserveFraction;
    // A DAG at its cap can be granted nothing in a pool that has no slot to lend, so its
    // ready jobs are not copied there; where the pool can lend, it is the one that borrows.
    const reserveRule = { fraction: lendReserve ?? 0, minSlots: c.config.lendReserveMinSlots };
    const reserveInPool = (pool: string): number => reserveOf(reserveRule, c.pool.poolSlots(pool));
    const canLend = new Map<string, boolean>();
    const lends = (pool: string): boolean => {
      let yes = canLend.get(pool);
      if (yes === undefined) canLend.set(pool, (yes = lendReserve !== null && c.pool.freeIn(pool) > reserveInPool(pool) && !this.lendPaused(pool)));
      return yes;
    };
    const skipAt = (fraction: number | undefined, pool: string): number => (lends(pool) ? Infinity : capOf(fraction, pool));
    const { byPool, dagShard } = this.views(nowMs, skipAt);
    const cappedBefore = this.d.loadedLeaders().reduce((n, l) => n + l.cappedDags(capOf), 0);
    c.metrics.set('dags_capped', cappedBefore);
    if (byPool.size === 0) return null;
    const rotation = this.rotation++;
    // Ties between equally free workers go differently on each node and in each round, so
    // the nodes do not all pick the same idle workers (each double fill is a hand-back).
    const tieSalt = (this.nodeSalt + Math.imul(rotation, 0x9e3779b1)) | 0;
    const offers = c.pool.waitingOffers();
    const plan: DispatchPlan<JobId, WorkerId> = { grants: [], capped: [] };
    const checks = new Map<string, LendCheck>();
    // Each pool is planned on its own: its cap is a fraction of its own live slots, and
    // only its own workers may be granted its jobs.
    for (const [pool, dags] of byPool) {
      const poolSlots = c.pool.poolSlots(pool);
      const poolFree = c.pool.freeIn(pool);
      const reserve = lendReserve === null ? undefined : reserveInPool(pool);
      // The round can grant at most this many jobs, so it needs at most this many workers
      // of each offer: the pool picks them in the planner's own order without listing the
      // whole fleet.
      let grantable = 0;
      for (const d of dags) grantable += reserve === undefined ? Math.min(d.ready.length, Math.max(0, capOf(d.capFraction, pool) - d.held)) : d.ready.length;
      grantable = Math.min(grantable, poolFree);
      const workers = offers.filter((o) => o.offer.pool === pool).flatMap((o) => c.pool.bestWaiting(grantable, tieSalt, o.key));
      if (workers.length === 0) continue;
      const part = planDispatch({
        dags,
        poolSlots,
        workers,
        capFraction: c.config.capFraction,
        rotation,
        tieSalt,
        fits: keysFit,
        // A pool whose lending is paused lends nothing: as if it had no slot above its reserve.
        ...(reserve === undefined ? {} : { lendReserve: reserve, poolFree: lends(pool) ? poolFree : 0 }),
        ...(limitsFree ? { limitsFree } : {}),
      });
      plan.grants.push(...part.grants);
      plan.capped.push(...part.capped);
      if (reserve !== undefined) {
        // Every grant of a lending node carries its pool's check (see fairshare/lend-check.ts);
        // only a part that lends lists the waiting workers the store counts from.
        const check: LendCheck = {
          pool,
          reserve,
          fraction: lendReserve!,
          minSlots: reserveRule.minSlots,
          liveWindowMs: c.config.workerLiveWindowMs,
          workers: part.grants.some((g) => g.lent) ? c.pool.waitingIn(pool) : [],
        };
        for (const g of part.grants) checks.set(g.jobId, check);
      }
    }
    c.metrics.set('dags_capped', cappedBefore + plan.capped.length);
    c.metrics.inc('leases_lent_total', plan.grants.filter((g) => g.lent).length);
    return plan.grants.length === 0 ? null : { plan, dagShard, checks };
  }

  /** Every leader's fair-share view, per pool, and which leader owns each DAG in it. */
  private views(
    nowMs: number,
    capOf: ((fraction: number | undefined, pool: string) => number) | undefined,
  ): { byPool: Map<string, DispatchDag<JobId>[]>; dagShard: Map<string, ShardLeader> } {
    const dagShard = new Map<string, ShardLeader>();
    const byPool = new Map<string, DispatchDag<JobId>[]>();
    for (const leader of this.d.loadedLeaders()) {
      for (const view of leader.dispatchView(nowMs, capOf)) {
        dagShard.set(view.dagId, leader);
        let list = byPool.get(view.pool);
        if (!list) byPool.set(view.pool, (list = []));
        list.push(view);
      }
    }
    return { byPool, dagShard };
  }

  /** The plan's grants per leader, and how many each worker was planned. */
  private groupGrants(
    plan: DispatchPlan<JobId, WorkerId>,
    dagShard: Map<string, ShardLeader>,
    checks: Map<string, LendCheck>,
  ): { byLeader: Map<ShardLeader, Grant[]>; planned: Map<WorkerId, number> } {
    const byLeader = new Map<ShardLeader, Grant[]>();
    const planned = new Map<WorkerId, number>();
    for (const g of plan.grants) {
      const leader = dagShard.get(g.dagId);
      assert(leader, `the plan grants a job of DAG ${g.dagId} only if a leader's view offered it`);
      const list = byLeader.get(leader) ?? [];
      const lend = checks.get(g.jobId);
      list.push(lend ? { jobId: g.jobId, workerId: g.workerId, lend, ...(g.lent ? { lent: true } : {}) } : { jobId: g.jobId, workerId: g.workerId });
      byLeader.set(leader, list);
      planned.set(g.workerId, (planned.get(g.workerId) ?? 0) + 1);
    }
    return { byLeader, planned };
  }

  /** The granted leases as each worker receives them. */
  private assignments(results: { leader: ShardLeader; granted: GrantedLease[] }[]): Map<WorkerId, Assignment[]> {
    const { config, traces } = this.c;
    const perWorker = new Map<WorkerId, Assignment[]>();
    for (const { leader, granted } of results) {
      for (const lease of granted) {
        const list = perWorker.get(lease.workerId) ?? [];
        const traceparent = traces?.traceparentOf(lease.jobId);
        const assignment: Assignment = {
          jobId: lease.jobId,
          runId: lease.runId,
          dagId: lease.dagId,
          taskId: lease.taskId,
          attempt: lease.attempt,
          fence: lease.fence,
          leaseTtlMs: config.leaseTtlMs,
          renewIntervalMs: config.renewIntervalMs,
          task: leader.taskOf(lease.runId, lease.taskId) ?? { type: 'unknown', config: {}, timeoutMs: 0, dependsOn: [] },
          params: leader.paramsOf(lease.runId),
        };
        if (traceparent) assignment.traceparent = traceparent;
        list.push(assignment);
        perWorker.set(lease.workerId, list);
      }
    }
    return perWorker;
  }

  private scheduleRetryWakeup(nowMs: number): void {
    let next: number | null = null;
    for (const l of this.d.allLeaders()) {
      const t = l.nextRetryAtMs(nowMs);
      if (t != null && (next == null || t < next)) next = t;
    }
    if (next == null || (this.retryTimer && this.retryTimer.atMs <= next && this.retryTimer.atMs > nowMs)) return;
    this.retryTimer?.cancel();
    const cancel = this.c.timers.after(next - nowMs, () => {
      this.retryTimer = null;
      this.kick();
    });
    this.retryTimer = { atMs: next, cancel };
  }
}
