import { InvalidInputError } from '../errors';
import { characterProblem } from '../input/free-form';
import { parseDagId, sequenceIdProblem } from '../ids';
import { poolProblem } from '../routing/offer';
import type { Schedule } from '../spec';

/**
 * Notifications: channels (where to send), rules (what to send where) and the
 * notifications themselves (one per event and rule, with its delivery state). A shard's
 * leader queues a notification when it sees the event and delivers it, and the store
 * records every delivery under the leader's epoch, so a notification is recorded delivered
 * once even when leaders change in the middle of a delivery.
 */

export const NOTIFICATION_EVENTS = ['run_failed', 'task_failed', 'run_recovered', 'deadline_missed', 'shard_leaderless', 'pool_no_worker'] as const;
export type NotificationEvent = (typeof NOTIFICATION_EVENTS)[number];

/** Events a rule fires for only after a time it names (`afterSeconds`). */
export const TIMED_EVENTS = ['deadline_missed', 'shard_leaderless', 'pool_no_worker'] as const;
/** Events about the cluster rather than one DAG: their rules name no DAG, and their notifications carry none. */
export const CLUSTER_EVENTS = ['shard_leaderless', 'pool_no_worker'] as const;

export function isTimedEvent(event: NotificationEvent): event is (typeof TIMED_EVENTS)[number] {
  return (TIMED_EVENTS as readonly string[]).includes(event);
}

export function isClusterEvent(event: NotificationEvent): event is (typeof CLUSTER_EVENTS)[number] {
  return (CLUSTER_EVENTS as readonly string[]).includes(event);
}

export const CHANNEL_KINDS = ['webhook', 'slack'] as const;
export type ChannelKind = (typeof CHANNEL_KINDS)[number];

export const NOTIFICATION_STATES = ['pending', 'delivered', 'dead'] as const;
export type NotificationState = (typeof NOTIFICATION_STATES)[number];

export const NOTIFY_LIMITS = {
  maxChannelNameChars: 100,
  maxUrlChars: 2_000,
  maxSecretChars: 500,
  /** A notification that failed this many times is dead: it stays for an operator to see and is not tried again. */
  maxAttempts: 8,
  baseBackoffMs: 5_000,
  maxBackoffMs: 10 * 60_000,
  /**
   * How long a claimed notification is not due again: longer than a delivery's timeout,
   * so a leader does not send a notification twice while its first request is in flight,
   * and short enough that the next leader retries it soon after a crash.
   */
  claimMs: 30_000,
  maxLastErrorChars: 1_000,
  defaultListLimit: 100,
  maxListLimit: 1_000,
  /** The bounds of a timed rule's `afterSeconds`: a deadline, a shard without a leader, a pool without a worker. */
  minAfterSeconds: 1,
  maxAfterSeconds: 30 * 24 * 3600,
  maxItemsPerEnqueue: 1_000,
  maxDueLimit: 500,
  /**
   * How far back a new leader looks for failed runs of its shard whose notifications a
   * predecessor may have died before queueing: well past a takeover (the shard lease TTL
   * plus a load), short enough that an old failure is not told as news.
   */
  catchUpMs: 10 * 60_000,
  /**
   * How far back a new leader of a shard looks for deadlines that passed while nobody
   * checked them (the shard was leaderless, or every scheduler was down): long enough for
   * an outage of the schedulers themselves, short enough that a stale miss is not news.
   */
  deadlineLookbackMs: 60 * 60_000,
  /** The most slots of one DAG and rule a check looks at (the latest ones): a per-second schedule after an outage costs no more. */
  maxDeadlineSlotsPerCheck: 100,
  /**
   * A pool counts as known while a worker of it was seen within this long; a pool whose
   * last worker left longer ago is decommissioned, not news.
   */
  poolLookbackMs: 24 * 3600_000,
} as const;

/** A channel as every read shows it: whether it has a secret, never the secret itself. */
export interface NotificationChannelRow {
  id: string;
  name: string;
  kind: ChannelKind;
  /** Masked (maskChannelUrl): scheme, host and port, and the last few characters of the rest. */
  url: string;
  hasSecret: boolean;
  createdAt: Date;
}

export interface NewNotificationChannel {
  name: string;
  kind: ChannelKind;
  url: string;
  /** The key of the HMAC-SHA256 signature of every body sent to the channel; none means unsigned. */
  secret?: string | null;
}

export interface NotificationRuleRow {
  id: string;
  channelId: string;
  /** null: every DAG (always null for a cluster event). */
  dagId: string | null;
  event: NotificationEvent;
  /**
   * Timed events only (null otherwise): for deadline_missed, how long after a run's
   * scheduled time it must have finished; for shard_leaderless, how long a shard may go
   * without a leader; for pool_no_worker, how long a pool may go without a live worker.
   */
  afterSeconds: number | null;
  /** pool_no_worker only: the pool watched; null watches every pool (and null for other events). */
  pool: string | null;
  createdAt: Date;
}

export interface NewNotificationRule {
  channelId: string;
  dagId?: string | null;
  event: NotificationEvent;
  afterSeconds?: number | null;
  pool?: string | null;
}

export interface NotificationRow {
  id: string;
  /** The idempotency key: `<event>:<subject>:<ruleId>`, unique, sent with every delivery. */
  dedupeKey: string;
  ruleId: string;
  channelId: string;
  shard: number;
  /** null for a cluster event. */
  dagId: string | null;
  event: NotificationEvent;
  payload: Record<string, unknown>;
  state: NotificationState;
  attempts: number;
  nextAttemptAt: Date;
  lastError: string | null;
  /** The epoch of the leader that last claimed it for a delivery. */
  claimedEpoch: number | null;
  createdAt: Date;
  deliveredAt: Date | null;
}

/** A notification claimed for delivery, with what its leader needs to send it. */
export interface DueNotification extends NotificationRow {
  channel: { kind: ChannelKind; url: string; secret: string | null };
}

/**
 * An event a leader saw, to be queued once per matching rule. `subject` names what it is
 * about (a run id, a job id), so that the same event seen twice gets the same key.
 */
export interface NotificationEventItem {
  event: NotificationEvent;
  /** null for a cluster event. */
  dagId: string | null;
  subject: string;
  payload: Record<string, unknown>;
}

export type DeliveryOutcome = { kind: 'delivered' } | { kind: 'failed'; error: string };

export interface ListNotificationsQuery {
  state?: NotificationState;
  limit?: number;
}

/** A deadline_missed rule as a shard leader's deadline check reads it. */
export interface DeadlineRule {
  id: string;
  /** null: every scheduled DAG. */
  dagId: string | null;
  afterSeconds: number;
  createdAt: Date;
}

/** A scheduled DAG a deadline rule covers, with its current schedule (paused or not: a paused DAG misses its deadlines too). */
export interface DeadlineDag {
  id: string;
  shard: number;
  schedule: Schedule;
  createdAt: Date;
}

/** What a deadline and cluster check reads in one statement (NotificationLeaderStore.notificationWatch). */
export interface NotificationWatch {
  /** The store's clock: deadlines are judged by it. */
  now: Date;
  deadlineRules: DeadlineRule[];
  /** The scheduled DAGs of the asked shards some deadline rule covers. */
  dags: DeadlineDag[];
  /** Whether any shard_leaderless or pool_no_worker rule exists: without one the cluster check is skipped. */
  clusterRules: boolean;
}

/** One slot of one DAG whose deadline under one rule has passed, for the store to check against its runs. */
export interface DeadlineCheck {
  ruleId: string;
  dagId: string;
  scheduledAt: Date;
}

/** The subject of a deadline_missed notification: the DAG and its slot. */
export function deadlineSubject(dagId: string, scheduledAt: Date): string {
  return `${dagId}@${scheduledAt.toISOString()}`;
}

/** Checks a batch of deadline checks (InvalidInputError naming the field). */
export function checkDeadlineChecks(checks: DeadlineCheck[]): DeadlineCheck[] {
  if (checks.length > NOTIFY_LIMITS.maxItemsPerEnqueue) throw new InvalidInputError(`at most ${NOTIFY_LIMITS.maxItemsPerEnqueue} checks per call`, { field: 'checks' });
  checks.forEach((c, i) => {
    if (typeof c.ruleId !== 'string' || sequenceIdProblem(c.ruleId) !== null) throw new InvalidInputError('ruleId must name a rule', { field: `checks.${i}.ruleId` });
    parseDagId(c.dagId, `checks.${i}.dagId`);
    if (!(c.scheduledAt instanceof Date) || Number.isNaN(c.scheduledAt.getTime())) throw new InvalidInputError('scheduledAt must be a date', { field: `checks.${i}.scheduledAt` });
  });
  return checks;
}

/** The idempotency key of an event's notification for one rule. */
export function dedupeKeyOf(item: Pick<NotificationEventItem, 'event' | 'subject'>, ruleId: string): string {
  return `${item.event}:${item.subject}:${ruleId}`;
}

/** The wait after the `attempts`-th failed attempt: 5 s doubling, at most 10 minutes. */
export function notificationBackoffMs(attempts: number): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 30));
  return Math.min(NOTIFY_LIMITS.baseBackoffMs * 2 ** exponent, NOTIFY_LIMITS.maxBackoffMs);
}

/** The prefix of a secret in the Standard Webhooks form: `whsec_` and the key in base64. */
export const WEBHOOK_SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** The key sizes the Standard Webhooks specification asks of a `whsec_` secret, in bytes. */
export const WEBHOOK_KEY_BYTES = { min: 24, max: 64 } as const;

/** Why a `whsec_` secret is not one a Standard Webhooks library can read, or null (any other secret is used as its UTF-8 bytes). */
export function webhookSecretProblem(secret: string): string | null {
  if (!secret.startsWith(WEBHOOK_SECRET_PREFIX)) return null;
  const encoded = secret.slice(WEBHOOK_SECRET_PREFIX.length);
  const bytes = BASE64.test(encoded) ? (encoded.length / 4) * 3 - (encoded.match(/=*$/)?.[0].length ?? 0) : -1;
  if (bytes < WEBHOOK_KEY_BYTES.min || bytes > WEBHOOK_KEY_BYTES.max) {
    return `starting whsec_ must go on with ${WEBHOOK_KEY_BYTES.min} to ${WEBHOOK_KEY_BYTES.max} bytes in base64`;
  }
  return null;
}

/**
 * The HMAC key of a channel's secret: a `whsec_` secret's base64 bytes, as Standard Webhooks
 * libraries read it; any other secret's UTF-8 bytes (a receiver passes them as a raw key).
 */
export function webhookKey(secret: string): Uint8Array {
  if (secret.startsWith(WEBHOOK_SECRET_PREFIX)) {
    const binary = atob(secret.slice(WEBHOOK_SECRET_PREFIX.length));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  }
  return new TextEncoder().encode(secret);
}

function text(value: unknown, field: string, maxChars: number): string {
  if (typeof value !== 'string') throw new InvalidInputError(`${field} must be a string`, { field });
  const characters = characterProblem(value);
  if (characters !== null) throw new InvalidInputError(`${field} ${characters}`, { field });
  const trimmed = value.trim();
  if (trimmed.length === 0) throw new InvalidInputError(`${field} must not be empty`, { field });
  if (trimmed.length > maxChars) throw new InvalidInputError(`${field} must be at most ${maxChars} characters`, { field });
  return trimmed;
}

function oneOf<T extends string>(value: unknown, field: string, allowed: readonly T[]): T {
  if (typeof value !== 'string' || !(allowed as readonly string[]).includes(value)) {
    throw new InvalidInputError(`${field} must be one of ${allowed.join(', ')}`, { field, allowed: [...allowed] });
  }
  return value as T;
}

/** Checks a channel as an operator gives it; throws InvalidInputError naming the field. */
export function checkChannelInput(input: NewNotificationChannel): Required<NewNotificationChannel> {
  const name = text(input.name, 'name', NOTIFY_LIMITS.maxChannelNameChars);
  const kind = oneOf(input.kind, 'kind', CHANNEL_KINDS);
  const url = text(input.url, 'url', NOTIFY_LIMITS.maxUrlChars);
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError('url must be an absolute http or https URL', { field: 'url' });
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw new InvalidInputError('url must be an http or https URL', { field: 'url' });
  let secret: string | null = null;
  if (input.secret !== undefined && input.secret !== null) {
    // The secret is checked but never echoed: a message names the field and the rule only.
    if (typeof input.secret !== 'string' || input.secret.length === 0 || input.secret.length > NOTIFY_LIMITS.maxSecretChars) {
      throw new InvalidInputError(`secret must be a string of 1 to ${NOTIFY_LIMITS.maxSecretChars} characters`, { field: 'secret' });
    }
    const problem = characterProblem(input.secret) ?? webhookSecretProblem(input.secret);
    if (problem !== null) throw new InvalidInputError(`secret ${problem}`, { field: 'secret' });
    secret = input.secret;
  }
  return { name, kind, url, secret };
}

export interface CheckedRule {
  channelId: string;
  dagId: string | null;
  event: NotificationEvent;
  afterSeconds: number | null;
  pool: string | null;
}

/** Checks a rule's own fields (the store checks that its channel exists); throws InvalidInputError naming the field. */
export function checkRuleInput(input: NewNotificationRule): CheckedRule {
  if (typeof input.channelId !== 'string' || sequenceIdProblem(input.channelId) !== null) {
    throw new InvalidInputError('channelId must name an existing channel', { field: 'channelId' });
  }
  const event = oneOf(input.event, 'event', NOTIFICATION_EVENTS);
  const given = (v: unknown): boolean => v !== undefined && v !== null;
  if (isClusterEvent(event) && given(input.dagId)) throw new InvalidInputError(`dagId: a ${event} rule is about the cluster and names no DAG`, { field: 'dagId' });
  const dagId = given(input.dagId) ? parseDagId(input.dagId, 'dagId') : null;
  let afterSeconds: number | null = null;
  if (isTimedEvent(event)) {
    const after = input.afterSeconds;
    if (typeof after !== 'number' || !Number.isInteger(after) || after < NOTIFY_LIMITS.minAfterSeconds || after > NOTIFY_LIMITS.maxAfterSeconds) {
      throw new InvalidInputError(`afterSeconds: a ${event} rule needs a whole number of seconds from ${NOTIFY_LIMITS.minAfterSeconds} to ${NOTIFY_LIMITS.maxAfterSeconds}`, {
        field: 'afterSeconds',
      });
    }
    afterSeconds = after;
  } else if (given(input.afterSeconds)) {
    throw new InvalidInputError(`afterSeconds: applies only to ${TIMED_EVENTS.join(', ')} rules`, { field: 'afterSeconds' });
  }
  let pool: string | null = null;
  if (given(input.pool)) {
    if (event !== 'pool_no_worker') throw new InvalidInputError('pool: applies only to pool_no_worker rules', { field: 'pool' });
    if (typeof input.pool !== 'string') throw new InvalidInputError('pool must be a string', { field: 'pool' });
    const problem = poolProblem(input.pool);
    if (problem !== null) throw new InvalidInputError(`pool ${problem}`, { field: 'pool' });
    pool = input.pool;
  }
  return { channelId: input.channelId, dagId, event, afterSeconds, pool };
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A rule's time as an operator writes it: a whole number of seconds, or of s, m, h or d
 * (`90s`, `10m`, `2h`). Throws InvalidInputError naming `field` for anything else.
 */
export function parseDurationSeconds(value: string, field = 'afterSeconds'): number {
  const match = /^\s*(\d{1,9})\s*([smhd]?)\s*$/.exec(value);
  if (!match) throw new InvalidInputError(`${field} must be a duration such as 90s, 10m or 2h, got "${value}"`, { field });
  return Number(match[1]) * DURATION_UNITS[match[2] || 's']!;
}

/** A rule's time for display: the largest whole unit (`10m`, `90s`). */
export function formatDurationSeconds(seconds: number): string {
  for (const unit of ['d', 'h', 'm'] as const) if (seconds % DURATION_UNITS[unit]! === 0) return `${seconds / DURATION_UNITS[unit]!}${unit}`;
  return `${seconds}s`;
}

/** Checks a list query; the limit defaults to 100 and is at most 1,000. */
export function checkListNotificationsQuery(query: ListNotificationsQuery): { state: NotificationState | null; limit: number } {
  const state = query.state === undefined ? null : oneOf(query.state, 'state', NOTIFICATION_STATES);
  const limit = query.limit ?? NOTIFY_LIMITS.defaultListLimit;
  if (!Number.isInteger(limit) || limit < 1 || limit > NOTIFY_LIMITS.maxListLimit) {
    throw new InvalidInputError(`limit must be a whole number from 1 to ${NOTIFY_LIMITS.maxListLimit}`, { field: 'limit' });
  }
  return { state, limit };
}

/** Checks a recorded outcome, cutting a long error to what the store keeps. */
export function checkDeliveryOutcome(outcome: DeliveryOutcome): DeliveryOutcome {
  if (outcome.kind === 'delivered') return outcome;
  if (outcome.kind !== 'failed') throw new InvalidInputError('outcome.kind must be delivered or failed', { field: 'outcome.kind' });
  return { kind: 'failed', error: String(outcome.error).slice(0, NOTIFY_LIMITS.maxLastErrorChars) };
}

/** Checks a batch of events to queue. */
export function checkEventItems(items: NotificationEventItem[]): NotificationEventItem[] {
  if (items.length > NOTIFY_LIMITS.maxItemsPerEnqueue) throw new InvalidInputError(`at most ${NOTIFY_LIMITS.maxItemsPerEnqueue} events per call`, { field: 'items' });
  items.forEach((item, i) => {
    const event = oneOf(item.event, `items.${i}.event`, NOTIFICATION_EVENTS);
    // A timed event depends on its rule's time, which only its own check knows
    // (enqueueMissedDeadlines, enqueueClusterNotifications); queued here it would ignore it.
    if (isTimedEvent(event)) throw new InvalidInputError(`a ${event} event is queued by its own check, not as an event item`, { field: `items.${i}.event` });
    if (isClusterEvent(event)) {
      if (item.dagId !== null) throw new InvalidInputError(`a ${event} event names no DAG`, { field: `items.${i}.dagId` });
    } else parseDagId(item.dagId, `items.${i}.dagId`);
    text(item.subject, `items.${i}.subject`, 100);
  });
  return items;
}
