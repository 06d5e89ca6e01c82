import type { Clock, Timers } from '../clock';
import { LIMITS } from '../limits';
import type { DueDag, DuePageKey, LeaderStore } from '../store';
import type { NodeConfig } from './config';
import type { NodeMetrics } from './metrics';
import type { ShardLeader } from './shard-leader';
import { StoreClockEstimate } from './store-clock';
import { UpcomingSlots } from './upcoming-slots';

export interface DueRunsDeps {
  store: LeaderStore;
  clock: Clock;
  timers: Timers;
  config: Pick<NodeConfig, 'dueBatch' | 'tickLookaheadMs'>;
  metrics: NodeMetrics;
  /** The leaders of this node that are loaded and not deposed, asked afresh on every use. */
  leaders: () => ShardLeader[];
  /** The leader of a shard, if this node leads it and it is loaded and not deposed. */
  leaderOf: (shard: number) => ShardLeader | undefined;
  onError: (where: string, err: unknown) => void;
}

/**
 * A scheduler node's runs of schedules: the tick that reads the due DAGs of the shards it
 * leads and creates their runs, the DAGs it read ahead and holds until their slot
 * (UpcomingSlots), and its estimate of the store's clock, which says when a slot has come.
 */
export class DueRuns {
  private readonly storeClock = new StoreClockEstimate();
  private readonly upcoming: UpcomingSlots;
  private stopped = false;

  constructor(private readonly deps: DueRunsDeps) {
    this.upcoming = new UpcomingSlots(
      deps.timers,
      (storeMs) => storeMs - this.storeNowMs(),
      (dueMs, dags) => this.releaseUpcoming(dueMs, dags),
    );
  }

  /** The store's clock as this node estimates it (offset measured on every due read). */
  storeNowMs(): number {
    return this.deps.clock.nowMs() + this.storeClock.offsetMs;
  }

  /** Drops every held slot; nothing is created after this. */
  stop(): void {
    this.stopped = true;
    this.upcoming.clear();
  }

  /**
   * Asks the store which DAGs of our shards are due (by index), and creates their runs. A
   * full page means there may be more: the next page is read (by key, past this one) while
   * this page's runs are being created, and at most one page's creations are left in
   * flight while the next is read, so a burst of due DAGs is held a page or two at a time.
   *
   * The read also returns the DAGs due within the look-ahead (config.tickLookaheadMs);
   * those are held until their slot and their runs created then (releaseUpcoming), so a
   * run is created on its slot instead of at the first tick after it. What is already due
   * when read, such as every slot a new leader's first tick finds missed, is created at once.
   */
  async tick(): Promise<void> {
    const tokens = this.deps.leaders().map((l) => l.token);
    if (tokens.length === 0) return;
    this.deps.metrics.inc('ticks_total');
    const startedMs = this.deps.clock.nowMs();
    let created = 0;
    const starts: Promise<void>[] = [];
    let after: DuePageKey | undefined;
    let creating: Promise<void> = Promise.resolve();
    // Slots held since an earlier tick are left out of the read; a slot this tick starts
    // holding on one page must still be read on the next.
    const skipSlots = this.upcoming.heldInstants(LIMITS.maxSkippedSlots);
    for (;;) {
      const sentMs = this.deps.clock.nowMs();
      const { now, dags } = await this.deps.store.dueDags(tokens, this.deps.config.dueBatch, after, { horizonMs: this.deps.config.tickLookaheadMs, skipSlots });
      this.storeClock.sample({ sentMs, storeMs: now.getTime(), receivedMs: this.deps.clock.nowMs() });
      const dueNow: DueDag[] = [];
      for (const due of dags) {
        if (this.upcoming.has(due)) continue;
        if (due.nextRunAt.getTime() > now.getTime()) this.upcoming.hold(due);
        else dueNow.push(due);
      }
      // The page before this one must be written before another is read.
      await creating;
      // Due DAGs are independent of each other: all are worked on at once, and the node
      // gathers their writes into a few statements for all its shards. Starting the runs
      // (inserting their jobs) goes on meanwhile.
      creating = Promise.all(
        dueNow.map(async (due) => {
          // Awaited first: `created += await ...` would read `created` before the wait and
          // lose the counts of the DAGs created meanwhile.
          const made = await this.createFor(due, now.getTime(), starts);
          created += made;
        }),
      ).then(() => undefined);
      if (dags.length < this.deps.config.dueBatch) break;
      const last = dags[dags.length - 1]!;
      after = { nextRunAt: last.nextRunAt, id: last.id };
    }
    await creating;
    if (created === 0) return;
    // A tick that made runs is timed twice: to its last run created (the tick proper), and
    // to its last run started (its jobs inserted, ready to lease), without holding the loop.
    const createdMs = this.deps.clock.nowMs() - startedMs;
    void Promise.all(starts).then(() => {
      this.deps.metrics.set('tick_last_runs', created);
      this.deps.metrics.set('tick_last_create_ms', createdMs);
      this.deps.metrics.set('tick_last_start_ms', this.deps.clock.nowMs() - startedMs);
      this.deps.metrics.inc('tick_runs_created_total', created);
    });
  }

  /**
   * Creates the runs of DAGs held since a tick read them ahead, now that their slot has
   * come by this node's estimate of the store's clock. The store refuses a DAG that is not
   * due by its own clock, so an estimate a little ahead costs a retry half a round trip
   * later, not an early run; a DAG that still gets nothing (it was edited, paused or its
   * shard lost meanwhile) is left to the regular tick, which reads the store afresh.
   */
  private async releaseUpcoming(dueMs: number, dags: DueDag[]): Promise<void> {
    let created = 0;
    const starts: Promise<void>[] = [];
    let pending = dags;
    for (let attempt = 0; attempt < 2 && pending.length > 0; attempt++) {
      if (attempt > 0) await new Promise<void>((resolve) => this.deps.timers.after(Math.max(5, Math.ceil(this.storeClock.rttMs / 2) + 2), resolve));
      if (this.stopped) return;
      const missed: DueDag[] = [];
      await Promise.all(
        pending.map(async (due) => {
          // Planned at the slot itself: a later slot that comes due meanwhile is the tick's.
          const made = await this.createFor(due, dueMs, starts);
          created += made;
          if (made === 0) missed.push(due);
        }),
      );
      pending = missed;
    }
    if (created === 0) return;
    // Timed against the slot, in the node's estimate of store time: how late the last run
    // was created, and how late the last of them was started (its jobs ready to lease).
    const createdLateMs = this.storeNowMs() - dueMs;
    await Promise.all(starts);
    this.deps.metrics.set('tick_on_time_last_runs', created);
    this.deps.metrics.set('tick_on_time_last_create_late_ms', createdLateMs);
    this.deps.metrics.set('tick_on_time_last_start_late_ms', this.storeNowMs() - dueMs);
    this.deps.metrics.inc('tick_on_time_runs_total', created);
    this.deps.metrics.inc('tick_runs_created_total', created);
  }

  /**
   * Creates one due DAG's runs through the leader of its shard, planned as of `planAtMs`,
   * and starts whatever they left queued (adding that to `starts`). Returns how many runs
   * it made: none when the shard is not led here or the store refused.
   */
  private async createFor(due: DueDag, planAtMs: number, starts: Promise<void>[]): Promise<number> {
    const leader = this.deps.leaderOf(due.shard);
    if (!leader) return 0;
    const made = await leader.createRuns(due, planAtMs).catch((e) => (this.deps.onError('tick', e), 0));
    if (made > 0) starts.push(leader.startQueued(due.id).catch((e) => this.deps.onError('tick', e)));
    return made;
  }
}
