import { NOTIFY_LIMITS, type DeadlineCheck, type NotificationRow, type NotificationWatch } from '../notify/notifications';
import { nextSlotAfter, walkBackward } from '../schedule/slots';
import type { LeaderToken, NotificationLeaderStore } from '../store';

export interface NotificationWatchDeps {
  store: Pick<NotificationLeaderStore, 'notificationWatch' | 'enqueueMissedDeadlines' | 'enqueueClusterNotifications'>;
  /** The tokens of the shards this node leads and has loaded. */
  tokens: () => LeaderToken[];
  /** The lowest shard with a live leader, as this node last read the shard leases; null before the first read. */
  lowestLedShard: () => number | null;
  /** A worker silent for longer than this is no longer live (the node's workerLiveWindowMs). */
  workerLiveWindowMs: number;
  /** Told of what a check queued, so the notifier delivers it on its next pass. */
  queued: (token: LeaderToken, created: NotificationRow[]) => void;
  failed: (where: string, err: unknown) => void;
}

/**
 * The slots whose deadline under some rule passed in (fromMs, toMs], for the DAGs of one
 * shard: for a rule of `afterSeconds`, the slots in (fromMs - after, toMs - after], at most
 * NOTIFY_LIMITS.maxDeadlineSlotsPerCheck of them per DAG and rule (the latest). A slot
 * before its DAG existed, or whose deadline passed before its rule existed, is left out:
 * a new rule or a new DAG is not told of what happened before it. The store checks the
 * same and the runs; this only keeps the batch small.
 *
 * `nextSlots` (from the previous call for the same shard, whose `toMs` was this `fromMs`)
 * holds, per rule, DAG and schedule, the first slot after that window: a pair whose next
 * deadline is still to come is skipped without asking its schedule, so a check of 100,000
 * DAGs costs a map lookup for most of them instead of a walk of a zoned cron. The map for
 * the next call is returned with the checks.
 */
export function deadlineChecks(
  watch: NotificationWatch,
  shard: number,
  fromMs: number,
  toMs: number,
  nextSlots: ReadonlyMap<string, number> = new Map(),
): { checks: DeadlineCheck[]; nextSlots: Map<string, number> } {
  const checks: DeadlineCheck[] = [];
  const next = new Map<string, number>();
  for (const rule of watch.deadlineRules) {
    const afterMs = rule.afterSeconds * 1000;
    for (const dag of watch.dags) {
      if (dag.shard !== shard || (rule.dagId !== null && rule.dagId !== dag.id)) continue;
      const pair = `${rule.id}\u0000${dag.id}\u0000${JSON.stringify(dag.schedule)}`;
      const known = nextSlots.get(pair);
      if (known !== undefined && known + afterMs > toMs) {
        next.set(pair, known);
        continue;
      }
      const following = nextSlotAfter(dag.schedule, toMs - afterMs);
      if (following !== null) next.set(pair, following);
      const earliest = Math.max(fromMs, rule.createdAt.getTime() - 1);
      if (toMs <= earliest) continue;
      const slots = walkBackward(dag.schedule, toMs - afterMs, earliest - afterMs, NOTIFY_LIMITS.maxDeadlineSlotsPerCheck);
      for (const slotMs of slots) if (slotMs >= dag.createdAt.getTime()) checks.push({ ruleId: rule.id, dagId: dag.id, scheduledAt: new Date(slotMs) });
    }
  }
  return { checks, nextSlots: next };
}

/**
 * A node's timed notifications, checked on a timer: the deadlines of the DAGs of every
 * shard it leads, and, when it leads the lowest led shard, the cluster's health. Each
 * shard leader checks the deadlines that passed since its last check (a new leader looks
 * back NOTIFY_LIMITS.deadlineLookbackMs, for what passed while nobody checked), judged by
 * the store's clock and queued under its token, so a deposed leader queues nothing and a
 * slot checked by two leaders across a failover is one notification by its key.
 */
export class NotificationWatcher {
  /** Per shard and epoch, the store time up to which deadlines were checked and queued, and each rule and DAG's next slot after it. */
  private readonly checked = new Map<string, { toMs: number; nextSlots: Map<string, number> }>();

  constructor(private readonly deps: NotificationWatchDeps) {}

  async check(): Promise<void> {
    const tokens = this.deps.tokens();
    const current = new Set(tokens.map(keyOf));
    for (const key of this.checked.keys()) if (!current.has(key)) this.checked.delete(key);
    if (tokens.length === 0) return;
    const watch = await this.deps.store.notificationWatch(tokens.map((t) => t.shard));
    const nowMs = watch.now.getTime();
    await Promise.all(tokens.map((token) => this.checkDeadlines(token, watch, nowMs)));
    if (watch.clusterRules) await this.checkCluster(tokens);
  }

  private async checkDeadlines(token: LeaderToken, watch: NotificationWatch, nowMs: number): Promise<void> {
    const key = keyOf(token);
    const last = this.checked.get(key);
    const fromMs = last?.toMs ?? nowMs - NOTIFY_LIMITS.deadlineLookbackMs;
    if (nowMs <= fromMs) return;
    const { checks, nextSlots } = deadlineChecks(watch, token.shard, fromMs, nowMs, last?.nextSlots);
    try {
      for (let i = 0; i < checks.length; i += NOTIFY_LIMITS.maxItemsPerEnqueue) {
        const created = await this.deps.store.enqueueMissedDeadlines(token, checks.slice(i, i + NOTIFY_LIMITS.maxItemsPerEnqueue));
        this.deps.queued(token, created);
      }
      // Only a check whose every batch landed moves on; a failed one is checked again whole.
      this.checked.set(key, { toMs: nowMs, nextSlots });
    } catch (err) {
      this.deps.failed('notify:deadlines', err);
    }
  }

  /**
   * One watcher for the whole cluster, since a leaderless shard cannot watch itself: the
   * node leading the lowest led shard. Two nodes may both think so for a tick across a
   * failover; the episode's key makes that one notification.
   */
  private async checkCluster(tokens: LeaderToken[]): Promise<void> {
    const lowest = this.deps.lowestLedShard();
    const token = tokens.find((t) => t.shard === lowest);
    if (!token) return;
    try {
      this.deps.queued(token, await this.deps.store.enqueueClusterNotifications(token, { workerLiveWindowMs: this.deps.workerLiveWindowMs }));
    } catch (err) {
      this.deps.failed('notify:cluster', err);
    }
  }
}

function keyOf(token: LeaderToken): string {
  return `${token.shard}:${token.epoch}`;
}
