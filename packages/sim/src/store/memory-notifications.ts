import {
  checkChannelInput,
  checkDeliveryOutcome,
  checkEventItems,
  checkListNotificationsQuery,
  checkRuleInput,
  dedupeKeyOf,
  InvalidInputError,
  maskChannelUrl,
  maskUrlsIn,
  notificationBackoffMs,
  NotFoundError,
  NOTIFY_LIMITS,
  type ChannelKind,
  type DeliveryOutcome,
  type DueNotification,
  type LeaderToken,
  type ListNotificationsQuery,
  type NewNotificationChannel,
  type NewNotificationRule,
  type NotificationChannelRow,
  type NotificationEventItem,
  type NotificationLeaderStore,
  type NotificationRow,
  type NotificationRuleRow,
  type NotificationStore,
  type RunId,
} from '@fenceline/core';
import { date } from './memory-rows';
import type { MemoryTables } from './memory-tables';

interface MemChannel {
  num: number;
  name: string;
  kind: ChannelKind;
  url: string;
  secret: string | null;
  createdAtMs: number;
}

interface MemRule extends Omit<NotificationRuleRow, 'createdAt'> {
  num: number;
  createdAtMs: number;
}

/** A notification as its row, with times kept in store milliseconds. */
interface MemNotification extends Omit<NotificationRow, 'nextAttemptAt' | 'createdAt' | 'deliveredAt'> {
  num: number;
  nextAttemptAtMs: number;
  createdAtMs: number;
  deliveredAtMs: number | null;
}

/**
 * Notifications in memory, with the SQL store's semantics: the same checks and refusals,
 * the same lead check on every leader call, the dedupe key as a unique index, and the
 * same backoff, computed on the store's clock.
 */
export class MemoryNotifications implements NotificationStore, NotificationLeaderStore {
  private readonly channels = new Map<string, MemChannel>();
  private readonly rules = new Map<string, MemRule>();
  private readonly notifications = new Map<string, MemNotification>();
  private readonly byKey = new Map<string, string>();
  private nextChannel = 1;
  private nextRule = 1;
  private nextNotification = 1;

  constructor(private readonly tables: MemoryTables) {}

  async createNotificationChannel(input: NewNotificationChannel): Promise<NotificationChannelRow> {
    const c = checkChannelInput(input);
    if ([...this.channels.values()].some((ch) => ch.name === c.name)) throw new InvalidInputError(`name: a channel named ${c.name} already exists`, { field: 'name' });
    const num = this.nextChannel++;
    const channel: MemChannel = { num, ...c, createdAtMs: this.tables.nowMs() };
    this.channels.set(String(num), channel);
    return this.channelRow(channel);
  }

  async listNotificationChannels(): Promise<NotificationChannelRow[]> {
    return [...this.channels.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)).map((c) => this.channelRow(c));
  }

  async deleteNotificationChannel(id: string): Promise<boolean> {
    if (!this.channels.delete(id)) return false;
    for (const [ruleId, rule] of this.rules) if (rule.channelId === id) this.rules.delete(ruleId);
    return true;
  }

  async createNotificationRule(input: NewNotificationRule): Promise<NotificationRuleRow> {
    const r = checkRuleInput(input);
    if (!this.channels.has(r.channelId)) throw new InvalidInputError(`channelId: no channel ${r.channelId}`, { field: 'channelId' });
    const num = this.nextRule++;
    const rule: MemRule = { num, id: String(num), ...r, createdAtMs: this.tables.nowMs() };
    this.rules.set(rule.id, rule);
    return this.ruleRow(rule);
  }

  async listNotificationRules(): Promise<NotificationRuleRow[]> {
    return [...this.rules.values()].sort((a, b) => a.num - b.num).map((r) => this.ruleRow(r));
  }

  async deleteNotificationRule(id: string): Promise<boolean> {
    return this.rules.delete(id);
  }

  async listNotifications(query: ListNotificationsQuery): Promise<NotificationRow[]> {
    const q = checkListNotificationsQuery(query);
    return [...this.notifications.values()]
      .filter((n) => q.state === null || n.state === q.state)
      .sort((a, b) => b.num - a.num)
      .slice(0, q.limit)
      .map((n) => this.row(n));
  }

  async retryNotification(id: string): Promise<NotificationRow> {
    const n = this.notifications.get(id);
    if (!n) throw new NotFoundError(`no notification ${id}`);
    if (n.state !== 'dead') throw new InvalidInputError(`id: notification ${id} is ${n.state}; only a dead notification is retried`, { field: 'id' });
    if (!this.channels.has(n.channelId)) throw new InvalidInputError(`id: the channel of notification ${id} was deleted, so it cannot be sent again`, { field: 'id' });
    n.state = 'pending';
    n.attempts = 0;
    n.nextAttemptAtMs = this.tables.nowMs();
    n.claimedEpoch = null;
    return this.row(n);
  }

  async enqueueNotifications(token: LeaderToken, items: NotificationEventItem[]): Promise<NotificationRow[]> {
    checkEventItems(items);
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'enqueueNotifications');
    return this.insert(token, items, now, null);
  }

  async catchUpNotifications(token: LeaderToken): Promise<NotificationRow[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'catchUpNotifications');
    const ended = [...this.tables.runs.values()]
      .filter((r) => r.shard === token.shard && r.state === 'failed' && r.endedAtMs !== null && r.endedAtMs > now - NOTIFY_LIMITS.catchUpMs)
      .sort((a, b) => a.num - b.num);
    const items = ended.map((r) => ({
      event: 'run_failed' as const,
      dagId: r.dagId,
      subject: r.id,
      endedAtMs: r.endedAtMs!,
      payload: { runId: r.id, dagId: r.dagId, scheduledAt: new Date(r.scheduledAtMs).toISOString(), state: 'failed' },
    }));
    return this.insert(token, items, now, (item) => item.endedAtMs);
  }

  /** One notification per item and matching rule, skipping keys taken; `endedAt` limits the rules to those that existed by then. */
  private insert<T extends NotificationEventItem>(token: LeaderToken, items: T[], now: number, endedAt: ((item: T) => number) | null): NotificationRow[] {
    const created: MemNotification[] = [];
    const rules = [...this.rules.values()].sort((a, b) => a.num - b.num);
    for (const item of items) {
      for (const rule of rules) {
        if (rule.event !== item.event || (rule.dagId !== null && rule.dagId !== item.dagId)) continue;
        if (endedAt !== null && rule.createdAtMs > endedAt(item)) continue;
        const dedupeKey = dedupeKeyOf(item, rule.id);
        if (this.byKey.has(dedupeKey)) continue;
        const num = this.nextNotification++;
        const n: MemNotification = {
          num,
          id: String(num),
          dedupeKey,
          ruleId: rule.id,
          channelId: rule.channelId,
          shard: token.shard,
          dagId: item.dagId,
          event: item.event,
          payload: structuredClone(item.payload ?? {}),
          state: 'pending',
          attempts: 0,
          nextAttemptAtMs: now,
          lastError: null,
          claimedEpoch: null,
          createdAtMs: now,
          deliveredAtMs: null,
        };
        this.notifications.set(n.id, n);
        this.byKey.set(dedupeKey, n.id);
        created.push(n);
      }
    }
    return created.sort((a, b) => a.num - b.num).map((n) => this.row(n));
  }

  async dueNotifications(token: LeaderToken, limit: number): Promise<DueNotification[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'dueNotifications');
    const bounded = Math.max(1, Math.min(Math.floor(limit), NOTIFY_LIMITS.maxDueLimit));
    const due = [...this.notifications.values()]
      .filter(
        (n) =>
          n.shard === token.shard &&
          n.state === 'pending' &&
          (n.nextAttemptAtMs <= now || (n.claimedEpoch !== null && n.claimedEpoch < token.epoch)) &&
          this.channels.has(n.channelId),
      )
      .sort((a, b) => a.nextAttemptAtMs - b.nextAttemptAtMs || a.num - b.num)
      .slice(0, bounded);
    for (const n of due) {
      n.claimedEpoch = token.epoch;
      n.nextAttemptAtMs = now + NOTIFY_LIMITS.claimMs;
    }
    return due
      .sort((a, b) => a.num - b.num)
      .map((n) => {
        const ch = this.channels.get(n.channelId)!;
        return { ...this.row(n), channel: { kind: ch.kind, url: ch.url, secret: ch.secret } };
      });
  }

  async recordDelivery(token: LeaderToken, notificationId: string, outcome: DeliveryOutcome): Promise<NotificationRow | null> {
    const o = checkDeliveryOutcome(outcome);
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'recordDelivery');
    const n = this.notifications.get(notificationId);
    if (!n || n.shard !== token.shard || n.state !== 'pending') return null;
    n.attempts += 1;
    // A failure ends the claim, so only the backoff decides when it is due again.
    n.claimedEpoch = o.kind === 'delivered' ? token.epoch : null;
    if (o.kind === 'delivered') {
      n.state = 'delivered';
      n.deliveredAtMs = now;
    } else {
      n.state = n.attempts >= NOTIFY_LIMITS.maxAttempts ? 'dead' : 'pending';
      n.lastError = o.error;
      n.nextAttemptAtMs = now + notificationBackoffMs(n.attempts);
    }
    return this.row(n);
  }

  async previousRunEnd(runId: RunId): Promise<'succeeded' | 'failed' | 'cancelled' | null> {
    const run = this.tables.runs.get(runId);
    if (!run) return null;
    let best: { scheduledAtMs: number; num: number; state: 'succeeded' | 'failed' | 'cancelled' } | null = null;
    for (const p of this.tables.runs.values()) {
      if (p.dagId !== run.dagId || (p.state !== 'succeeded' && p.state !== 'failed' && p.state !== 'cancelled')) continue;
      const before = p.scheduledAtMs < run.scheduledAtMs || (p.scheduledAtMs === run.scheduledAtMs && p.num < run.num);
      if (!before) continue;
      if (best === null || p.scheduledAtMs > best.scheduledAtMs || (p.scheduledAtMs === best.scheduledAtMs && p.num > best.num)) {
        best = { scheduledAtMs: p.scheduledAtMs, num: p.num, state: p.state };
      }
    }
    return best?.state ?? null;
  }

  /** A channel as every read shows it, its URL masked; dueNotifications alone gives the leader the whole URL. */
  private channelRow(c: MemChannel): NotificationChannelRow {
    return { id: String(c.num), name: c.name, kind: c.kind, url: maskChannelUrl(c.url), hasSecret: c.secret !== null, createdAt: date(c.createdAtMs) };
  }

  private ruleRow(r: MemRule): NotificationRuleRow {
    return { id: r.id, channelId: r.channelId, dagId: r.dagId, event: r.event, afterSeconds: r.afterSeconds, pool: r.pool, createdAt: date(r.createdAtMs) };
  }

  private row(n: MemNotification): NotificationRow {
    const { num: _num, nextAttemptAtMs, createdAtMs, deliveredAtMs, payload, ...rest } = n;
    return {
      ...rest,
      // An error may quote the address a delivery failed to reach; it is shown masked like the channel's URL.
      lastError: rest.lastError === null ? null : maskUrlsIn(rest.lastError),
      payload: structuredClone(payload),
      nextAttemptAt: date(nextAttemptAtMs),
      createdAt: date(createdAtMs),
      deliveredAt: deliveredAtMs === null ? null : date(deliveredAtMs),
    };
  }
}
