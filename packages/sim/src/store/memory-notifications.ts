import {
  checkChannelInput,
  checkDeadlineChecks,
  checkDeliveryOutcome,
  checkEventItems,
  checkListNotificationsQuery,
  checkRuleInput,
  deadlineSubject,
  dedupeKeyOf,
  DEFAULT_POOL,
  InvalidInputError,
  maskChannelUrl,
  maskUrlsIn,
  isClusterEvent,
  notificationBackoffMs,
  NotFoundError,
  NOTIFY_LIMITS,
  type ChannelKind,
  type DeadlineCheck,
  type DeliveryOutcome,
  type DueNotification,
  type ListNotificationsQuery,
  type NewNotificationChannel,
  type NewNotificationRule,
  type NotificationChannelRow,
  type NotificationEventItem,
  type NotificationRow,
  type NotificationRuleRow,
  type NotificationWatch,
  type RunEnd,
  type RunId,
} from '@fenceline/core';
import { type LeaderToken, type NotificationLeaderStore, type NotificationStore } from '@fenceline/core/store';
import { date, type MemRun } from './memory-rows';
import type { MemoryTables } from './memory-tables';

/** A worker's pool as its registration offered it (meta.offer.pool), as the SQL store reads it. */
function poolOfMeta(meta: Record<string, unknown>): string {
  const offer = meta.offer as { pool?: unknown } | undefined;
  return typeof offer?.pool === 'string' ? offer.pool : DEFAULT_POOL;
}

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
    return this.insert(token, items, now);
  }

  async catchUpNotifications(token: LeaderToken): Promise<NotificationRow[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'catchUpNotifications');
    const since = now - NOTIFY_LIMITS.catchUpMs;
    type Caught = NotificationEventItem & { endedAtMs: number };
    const items: Caught[] = [];
    const runPayload = (r: MemRun, state: string) => ({ runId: r.id, dagId: r.dagId, scheduledAt: new Date(r.scheduledAtMs).toISOString(), state });
    for (const r of this.tables.runs.values()) {
      if (r.shard !== token.shard || r.endedAtMs === null || r.endedAtMs <= since) continue;
      if (r.state === 'failed') items.push({ event: 'run_failed', dagId: r.dagId, subject: r.id, endedAtMs: r.endedAtMs, payload: runPayload(r, 'failed') });
      if (r.state === 'succeeded' && this.previousRunEnd(r.id as RunId) === 'failed') {
        items.push({ event: 'run_recovered', dagId: r.dagId, subject: r.id, endedAtMs: r.endedAtMs, payload: runPayload(r, 'succeeded') });
      }
    }
    for (const j of this.tables.jobs.values()) {
      if (j.shard !== token.shard || j.state !== 'failed' || j.endedAtMs === null || j.endedAtMs <= since) continue;
      items.push({ event: 'task_failed', dagId: j.dagId, subject: j.id, endedAtMs: j.endedAtMs, payload: { runId: j.runId, jobId: j.id, taskId: j.taskId, dagId: j.dagId } });
    }
    // The SQL store inserts in (ended_at, subject) order; ids follow that order here too.
    items.sort((a, b) => a.endedAtMs - b.endedAtMs || (a.subject < b.subject ? -1 : a.subject > b.subject ? 1 : 0));
    return this.insert(token, items, now, (item, rule) => rule.createdAtMs <= item.endedAtMs);
  }

  /**
   * One notification per item and matching rule, skipping keys taken; `fits` narrows the
   * rules further (those that existed when a run ended, a deadline's time), and
   * `payloadFor` adds what the rule itself says (a timed rule's afterSeconds).
   */
  private insert<T extends NotificationEventItem>(
    token: LeaderToken,
    items: T[],
    now: number,
    fits: (item: T, rule: MemRule) => boolean = () => true,
    payloadFor: (item: T, rule: MemRule) => Record<string, unknown> = (item) => item.payload ?? {},
  ): NotificationRow[] {
    const created: MemNotification[] = [];
    const rules = [...this.rules.values()].sort((a, b) => a.num - b.num);
    for (const item of items) {
      for (const rule of rules) {
        if (rule.event !== item.event || (rule.dagId !== null && rule.dagId !== item.dagId)) continue;
        if (!fits(item, rule)) continue;
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
          payload: structuredClone(payloadFor(item, rule)),
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

  async previousRunEnds(runIds: readonly RunId[], options: { watchedOnly?: boolean } = {}): Promise<Map<RunId, RunEnd>> {
    const ends = new Map<RunId, RunEnd>();
    const watching = options.watchedOnly ? [...this.rules.values()].filter((r) => r.event === 'run_recovered') : null;
    for (const runId of runIds) {
      if (watching) {
        const dagId = this.tables.runs.get(runId)?.dagId;
        if (!watching.some((r) => r.dagId === null || r.dagId === dagId)) continue;
      }
      const end = this.previousRunEnd(runId);
      if (end !== null) ends.set(runId, end);
    }
    return ends;
  }

  /** The state of the run's DAG's latest ended run scheduled before it, by (scheduled_at, id) as the SQL store orders them. */
  private previousRunEnd(runId: RunId): RunEnd | null {
    const run = this.tables.runs.get(runId);
    if (!run) return null;
    let best: { scheduledAtMs: number; num: number; state: RunEnd } | null = null;
    for (const p of this.tables.runsByDag.get(run.dagId) ?? []) {
      if (p.state !== 'succeeded' && p.state !== 'failed' && p.state !== 'cancelled') continue;
      const before = p.scheduledAtMs < run.scheduledAtMs || (p.scheduledAtMs === run.scheduledAtMs && p.num < run.num);
      if (!before) continue;
      if (best === null || p.scheduledAtMs > best.scheduledAtMs || (p.scheduledAtMs === best.scheduledAtMs && p.num > best.num)) {
        best = { scheduledAtMs: p.scheduledAtMs, num: p.num, state: p.state };
      }
    }
    return best?.state ?? null;
  }

  async notificationWatch(shards: number[]): Promise<NotificationWatch> {
    const now = this.tables.nowMs();
    const rules = [...this.rules.values()].sort((a, b) => a.num - b.num);
    const deadlineRules = rules
      .filter((r) => r.event === 'deadline_missed')
      .map((r) => ({ id: r.id, dagId: r.dagId, afterSeconds: r.afterSeconds!, createdAt: date(r.createdAtMs) }));
    const asked = new Set(shards);
    const covered = (dagId: string): boolean => deadlineRules.some((r) => r.dagId === null || r.dagId === dagId);
    const dags = [...this.tables.dags.values()]
      .filter((d) => asked.has(d.shard) && covered(d.id))
      .map((d) => ({ id: d.id, shard: d.shard, schedule: this.tables.specOf(d).schedule, createdAt: date(d.createdAtMs) }))
      .filter((d) => d.schedule.kind === 'cron' || d.schedule.kind === 'interval')
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    return { now: date(now), deadlineRules, dags, clusterRules: rules.some((r) => isClusterEvent(r.event)) };
  }

  async enqueueMissedDeadlines(token: LeaderToken, checks: DeadlineCheck[]): Promise<NotificationRow[]> {
    checkDeadlineChecks(checks);
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'enqueueMissedDeadlines');
    type Missed = NotificationEventItem & { ruleId: string; slotMs: number };
    const items: Missed[] = [];
    for (const c of checks) {
      const dag = this.tables.dags.get(c.dagId);
      const slotMs = c.scheduledAt.getTime();
      if (!dag || dag.shard !== token.shard || dag.createdAtMs > slotMs) continue;
      const runId = this.tables.runKeys.get(`${c.dagId}\u0000${slotMs}`);
      const run = runId === undefined ? undefined : this.tables.runs.get(runId);
      const scheduledAt = c.scheduledAt.toISOString();
      const payload = { dagId: c.dagId, scheduledAt, runId: run?.id ?? null, state: run?.state ?? null, endedAtMs: run?.endedAtMs ?? null };
      items.push({ event: 'deadline_missed', dagId: c.dagId, subject: deadlineSubject(c.dagId, c.scheduledAt), payload, ruleId: c.ruleId, slotMs });
    }
    // The SQL store inserts in (slot, DAG, rule) order.
    items.sort((a, b) => a.slotMs - b.slotMs || (a.dagId! < b.dagId! ? -1 : a.dagId! > b.dagId! ? 1 : 0) || Number(a.ruleId) - Number(b.ruleId));
    return this.insert(
      token,
      items,
      now,
      (item, rule) => {
        if (rule.id !== item.ruleId) return false;
        const deadlineMs = item.slotMs + rule.afterSeconds! * 1000;
        const { state, endedAtMs } = item.payload as { state: string | null; endedAtMs: number | null };
        const met = state === 'succeeded' && endedAtMs !== null && endedAtMs <= deadlineMs;
        return deadlineMs <= now && deadlineMs >= rule.createdAtMs && !met;
      },
      (item, rule) => {
        const { endedAtMs: _ended, ...rest } = item.payload as Record<string, unknown>;
        return { dagId: rest.dagId, scheduledAt: rest.scheduledAt, afterSeconds: rule.afterSeconds, runId: rest.runId, state: rest.state };
      },
    );
  }

  async enqueueClusterNotifications(token: LeaderToken, options: { workerLiveWindowMs: number }): Promise<NotificationRow[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'enqueueClusterNotifications');
    const liveMs = Math.max(1, Math.floor(options.workerLiveWindowMs));
    type Episode = NotificationEventItem & { sinceMs: number; pool: string | null };
    const episodes: Episode[] = [];
    const iso = (ms: number): string => new Date(ms).toISOString();
    // Every shard of the cluster, and any shard with a lease row (as the SQL store reads them).
    const shards = new Set<number>(this.tables.shards.keys());
    for (let n = 0; n < (this.tables.shardCount ?? 0); n++) shards.add(n);
    for (const n of [...shards].sort((a, b) => a - b)) {
      const lease = this.tables.shards.get(n);
      if (lease && lease.expiresAtMs !== null && lease.expiresAtMs > now) continue;
      const epoch = lease?.epoch ?? 0;
      const sinceMs = lease?.expiresAtMs ?? this.tables.clusterCreatedAtMs;
      if (sinceMs === null) continue;
      episodes.push({ event: 'shard_leaderless', dagId: null, subject: `shard:${n}:epoch:${epoch}`, sinceMs, pool: null, payload: { shard: n, epoch, since: iso(sinceMs) } });
    }
    const lastSeen = new Map<string, number>();
    for (const w of this.tables.workerTable.list(now - NOTIFY_LIMITS.poolLookbackMs + 1)) {
      const pool = poolOfMeta(w.meta);
      lastSeen.set(pool, Math.max(lastSeen.get(pool) ?? 0, w.lastSeen.getTime()));
    }
    for (const [pool, seenMs] of lastSeen) {
      const sinceMs = seenMs + liveMs;
      if (sinceMs > now) continue;
      episodes.push({ event: 'pool_no_worker', dagId: null, subject: `pool:${pool}:${iso(seenMs)}`, sinceMs, pool, payload: { pool, lastSeen: iso(seenMs), since: iso(sinceMs) } });
    }
    // A pool a rule or a task names counts though no worker served it lately (or ever),
    // from when it was first named.
    for (const [pool, namedAtMs] of this.namedPools()) {
      if (lastSeen.has(pool)) continue;
      episodes.push({ event: 'pool_no_worker', dagId: null, subject: `pool:${pool}:none`, sinceMs: namedAtMs, pool, payload: { pool, lastSeen: null, since: iso(namedAtMs) } });
    }
    const byKey = (e: Episode): string => `${e.event}\u0000${e.subject}`;
    episodes.sort((a, b) => (byKey(a) < byKey(b) ? -1 : byKey(a) > byKey(b) ? 1 : 0));
    return this.insert(
      token,
      episodes,
      now,
      (e, rule) => (rule.pool === null || rule.pool === e.pool) && e.sinceMs + rule.afterSeconds! * 1000 <= now,
      (e, rule) => ({ ...e.payload, afterSeconds: rule.afterSeconds }),
    );
  }

  /**
   * The pools some `pool_no_worker` rule names, and, while a rule watches every pool, the
   * pools the tasks of every DAG's current version name (the default pool for a task that
   * names none), each with when it was first named.
   */
  private namedPools(): Map<string, number> {
    const named = new Map<string, number>();
    const name = (pool: string, atMs: number): void => void named.set(pool, Math.min(named.get(pool) ?? atMs, atMs));
    let everyPool = false;
    for (const rule of this.rules.values()) {
      if (rule.event !== 'pool_no_worker') continue;
      if (rule.pool === null) everyPool = true;
      else name(rule.pool, rule.createdAtMs);
    }
    if (!everyPool) return named;
    for (const dag of this.tables.dags.values()) {
      const version = this.tables.versions.get(dag.id)?.find((v) => v.version === dag.version);
      if (!version) continue;
      for (const task of version.spec.tasks) name(task.pool ?? DEFAULT_POOL, version.createdAt.getTime());
    }
    return named;
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
