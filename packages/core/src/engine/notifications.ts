import type { Clock } from '../clock';
import { DeposedLeaderError } from '../errors';
import { notificationBackoffMs, webhookKey, type DueNotification, type NotificationEventItem, type NotificationRow } from '../notify/notifications';
import type { RunId } from '../ids';
import type { LeaderToken, NotificationLeaderStore } from '../store';
import { isStoreUnavailable } from '../unavailable';

/** One HTTP request of a delivery, built by the core and sent by whoever hosts the node. */
export interface DeliveryRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
}

/**
 * The I/O a node needs to deliver notifications, given from outside like its clock and
 * timers: the simulator has no network and passes none (then nothing is delivered), the
 * scheduler binds `deliver` to fetch with a timeout and `sign` to node:crypto.
 */
export interface NotifyIo {
  /** Sends the request; resolves with the answer's status, rejects when there was none (refused, timed out). */
  deliver(request: DeliveryRequest): Promise<{ status: number }>;
  /** The base64 HMAC-SHA256 of `content` keyed with `key` (webhookKey of the channel's secret). */
  sign(key: Uint8Array, content: string): string;
}

/** What a shard leader tells the notifier of; each call queues notifications under the leader's token. */
export interface LeaderNotifications {
  runEnded(token: LeaderToken, run: { id: string; dagId: string; scheduledAt: Date }, state: 'succeeded' | 'failed' | 'cancelled'): void;
  taskFailed(token: LeaderToken, job: { id: string; runId: string; dagId: string; taskId: string }): void;
  /** A new leader has loaded its shard: queue what a predecessor may have died before queueing. */
  loaded(token: LeaderToken): void;
}

export interface NotifierDeps {
  store: NotificationLeaderStore;
  io: NotifyIo;
  clock: Clock;
  /** The tokens of the shards this node leads and has loaded. */
  tokens: () => LeaderToken[];
  metric: (key: string, by?: number) => void;
  onError: (where: string, err: unknown) => void;
}

/** Notifications claimed per shard per pass; a pass delivers them concurrently. */
const DUE_PER_PASS = 20;
/**
 * How long a shard with nothing due goes unasked. Only the shard's leader queues its
 * notifications and records their failures, so it knows when the next one is due; this
 * bounds what it cannot know (a predecessor's backoffs, a difference of clocks).
 */
const IDLE_RECHECK_MS = 30_000;
/** Succeeded runs judged per store read at most, so one statement stays small. */
const RECOVERY_BATCH = 500;

/**
 * Turns a leader's run and job ends into notifications, and delivers the due ones of the
 * shards this node leads. Queueing is idempotent (the store's dedupe key), so an event a
 * leader sees twice, or that two leaders both see across a failover, is one notification;
 * a delivery is recorded under the epoch that claimed it, so a deposed leader's late record
 * is refused and the next leader delivers the notification again (at least once, with the
 * same idempotency key for the receiver to drop the repeat).
 */
export class Notifier implements LeaderNotifications {
  /**
   * Per shard and epoch, when to ask the store next (node clock). A leader that is new here
   * has no entry and asks at once, for what its predecessors left; without this every
   * shard would cost a statement a tick while nothing is pending.
   */
  private readonly wakeAtMs = new Map<string, number>();
  /** Succeeded runs waiting for the read that tells whether each is a recovery. */
  private readonly recoveries: { token: LeaderToken; runId: string; dagId: string; payload: Record<string, unknown> }[] = [];
  private judging = false;

  constructor(private readonly deps: NotifierDeps) {}

  private wake(token: LeaderToken, atMs: number): void {
    const key = `${token.shard}:${token.epoch}`;
    this.wakeAtMs.set(key, Math.min(this.wakeAtMs.get(key) ?? atMs, atMs));
  }

  runEnded(token: LeaderToken, run: { id: string; dagId: string; scheduledAt: Date }, state: 'succeeded' | 'failed' | 'cancelled'): void {
    const payload = { runId: run.id, dagId: run.dagId, scheduledAt: run.scheduledAt.toISOString(), state };
    if (state === 'failed') this.queue(token, [{ event: 'run_failed', dagId: run.dagId, subject: run.id, payload }]);
    if (state !== 'succeeded') return;
    this.recoveries.push({ token, runId: run.id, dagId: run.dagId, payload });
    this.judgeRecoveries();
  }

  /**
   * A recovery is judged by the DAG's previous ended run, read from the store rather than
   * memory, since the failed run may have been finished by an earlier leader. One read is
   * out at a time and takes every succeeded run that ended while the last was out, so a
   * busy leader pays one statement per batch of runs, not one per run.
   */
  private judgeRecoveries(): void {
    if (this.judging || this.recoveries.length === 0) return;
    const batch = this.recoveries.splice(0, RECOVERY_BATCH);
    this.judging = true;
    void this.deps.store
      .previousRunEnds(
        batch.map((r) => r.runId as RunId),
        { watchedOnly: true },
      )
      .then((ends) => {
        const byToken = new Map<LeaderToken, NotificationEventItem[]>();
        for (const r of batch) {
          if (ends.get(r.runId as RunId) !== 'failed') continue;
          const items = byToken.get(r.token) ?? [];
          items.push({ event: 'run_recovered', dagId: r.dagId, subject: r.runId, payload: r.payload });
          byToken.set(r.token, items);
        }
        for (const [token, items] of byToken) this.queue(token, items);
      })
      .catch((err: unknown) => {
        for (const token of new Set(batch.map((r) => r.token))) this.failed('notify:recovered', token, err);
      })
      .finally(() => {
        this.judging = false;
        this.judgeRecoveries();
      });
  }

  taskFailed(token: LeaderToken, job: { id: string; runId: string; dagId: string; taskId: string }): void {
    this.queue(token, [{ event: 'task_failed', dagId: job.dagId, subject: job.id, payload: { runId: job.runId, jobId: job.id, taskId: job.taskId, dagId: job.dagId } }]);
  }

  loaded(token: LeaderToken): void {
    void this.deps.store
      .catchUpNotifications(token)
      .then((created) => {
        this.deps.metric('notifications_queued_total', created.length);
        if (created.length > 0) this.wake(token, 0);
      })
      .catch((err: unknown) => this.failed('notify:catch-up', token, err));
  }

  private queue(token: LeaderToken, items: NotificationEventItem[]): void {
    void this.deps.store
      .enqueueNotifications(token, items)
      .then((created) => this.queued(token, created))
      .catch((err: unknown) => this.failed('notify:enqueue', token, err));
  }

  /** Counts what was queued under a token, and delivers it on the next pass (the deadline and cluster checks queue too). */
  queued(token: LeaderToken, created: NotificationRow[]): void {
    this.deps.metric('notifications_queued_total', created.length);
    if (created.length > 0) this.wake(token, 0);
  }

  /** One pass: claims and delivers the due notifications of every shard this node leads. */
  async deliverDue(): Promise<void> {
    const tokens = this.deps.tokens();
    const nowMs = this.deps.clock.nowMs();
    const current = new Set(tokens.map((t) => `${t.shard}:${t.epoch}`));
    for (const key of this.wakeAtMs.keys()) if (!current.has(key)) this.wakeAtMs.delete(key);
    await Promise.all(tokens.filter((t) => (this.wakeAtMs.get(`${t.shard}:${t.epoch}`) ?? 0) <= nowMs).map((token) => this.deliverShard(token, nowMs)));
  }

  private async deliverShard(token: LeaderToken, nowMs: number): Promise<void> {
    let due: DueNotification[];
    try {
      due = await this.deps.store.dueNotifications(token, DUE_PER_PASS);
    } catch (err) {
      this.failed('notify:due', token, err);
      return;
    }
    // A full claim may have left more behind: ask again on the next pass.
    this.wakeAtMs.set(`${token.shard}:${token.epoch}`, due.length >= DUE_PER_PASS ? 0 : nowMs + IDLE_RECHECK_MS);
    await Promise.all(due.map((n) => this.deliverOne(token, n)));
  }

  private async deliverOne(token: LeaderToken, n: DueNotification): Promise<void> {
    const request = deliveryRequest(n, this.deps.io, this.deps.clock.nowMs());
    let outcome: { kind: 'delivered' } | { kind: 'failed'; error: string };
    try {
      const { status } = await this.deps.io.deliver(request);
      outcome = status >= 200 && status < 300 ? { kind: 'delivered' } : { kind: 'failed', error: `the receiver answered HTTP ${status}` };
    } catch (err) {
      // The message only: a stack or a header could carry what the receiver must not see logged.
      outcome = { kind: 'failed', error: `no answer: ${err instanceof Error ? err.message : String(err)}` };
    }
    try {
      const recorded = await this.deps.store.recordDelivery(token, n.id, outcome);
      if (recorded?.state === 'pending') this.wake(token, this.deps.clock.nowMs() + notificationBackoffMs(recorded.attempts));
      if (recorded)
        this.deps.metric(recorded.state === 'delivered' ? 'notifications_delivered_total' : recorded.state === 'dead' ? 'notifications_dead_total' : 'notifications_failed_total');
    } catch (err) {
      this.failed('notify:record', token, err);
    }
  }

  /** A failure of a notification step: a deposed leader's refusal and a store outage are expected, anything else is reported. */
  failed(where: string, _token: LeaderToken | null, err: unknown): void {
    // A deposed leader writes nothing here; its renewal or its next leader write tells the node.
    if (err instanceof DeposedLeaderError) return this.deps.metric('notifications_refused_total');
    // An outage of the store leaves the notification pending (or its claim to run out); the next pass retries.
    if (isStoreUnavailable(err)) return;
    this.deps.onError(where, err);
  }
}

/** The message of a Slack-compatible channel. */
export function notificationText(n: Pick<DueNotification, 'event' | 'dagId' | 'payload'>): string {
  const p = n.payload;
  switch (n.event) {
    case 'run_failed':
      return `fenceline: run ${String(p.runId)} of DAG ${n.dagId} failed`;
    case 'run_recovered':
      return `fenceline: DAG ${n.dagId} recovered: run ${String(p.runId)} succeeded after a failure`;
    case 'task_failed':
      return `fenceline: task ${String(p.taskId)} of run ${String(p.runId)} (DAG ${n.dagId}) failed after its last retry`;
    case 'deadline_missed':
      return `fenceline: DAG ${n.dagId} missed its deadline: the run scheduled at ${String(p.scheduledAt)} had not succeeded ${String(p.afterSeconds)} s later`;
    case 'shard_leaderless':
      return `fenceline: shard ${String(p.shard)} has had no leader for more than ${String(p.afterSeconds)} s`;
    case 'pool_no_worker':
      return `fenceline: pool ${String(p.pool)} has had no live worker for more than ${String(p.afterSeconds)} s`;
  }
}

/**
 * The request of one delivery, signed as the Standard Webhooks specification says: the
 * `webhook-id` is the notification's idempotency key (the same on every attempt), the
 * `webhook-timestamp` the attempt's time in whole seconds, and `webhook-signature` is
 * `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`, so a receiver that refuses a
 * timestamp outside its tolerance refuses a captured delivery replayed later. Any Standard
 * Webhooks library verifies it (docs/security.md, "Notification signatures").
 */
export function deliveryRequest(n: DueNotification, io: Pick<NotifyIo, 'sign'>, nowMs: number): DeliveryRequest {
  const body =
    n.channel.kind === 'slack'
      ? JSON.stringify({ text: notificationText(n) })
      : JSON.stringify({ id: n.dedupeKey, event: n.event, dagId: n.dagId, createdAt: n.createdAt.toISOString(), attempt: n.attempts + 1, data: n.payload });
  const timestamp = String(Math.floor(nowMs / 1000));
  const headers: Record<string, string> = {
    'content-type': 'application/json',
    'webhook-id': n.dedupeKey,
    'webhook-timestamp': timestamp,
    'x-fenceline-idempotency-key': n.dedupeKey,
    'x-fenceline-event': n.event,
  };
  if (n.channel.secret !== null) headers['webhook-signature'] = `v1,${io.sign(webhookKey(n.channel.secret), `${n.dedupeKey}.${timestamp}.${body}`)}`;
  return { url: n.channel.url, headers, body };
}
