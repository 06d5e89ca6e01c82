import type { Clock, Timers } from '../clock';
import type { WorkerId } from '../ids';
import type { RunRow } from '../model';
import type { NewEvent, NodeStore, StoreNotice } from '../store';
import { DueRuns } from './due-runs';
import { checkNodeConfig, DEFAULT_NODE_CONFIG, type NodeConfig } from './config';
import { Dispatcher } from './dispatch';
import { EventBuffer } from './event-buffer';
import { Leadership } from './leadership';
import { NodeMetrics } from './metrics';
import type { NodeContext } from './node-context';
import type { ShardLeader } from './shard-leader';
import { isRevocation, WorkerPool, type Assignment, type PollItem } from './worker-pool';
import { WorkerProtocol } from './worker-protocol';
import { RELEASE_REASONS } from './revocation';
import { Notifier, type NotifyIo } from './notifications';
import { RunTraces } from './run-traces';
import type { Tracing, TraceSpan } from '../tracing';
import { NotificationWatcher } from './notification-watch';
import { StoreWatch } from './store-watch';
import { WriteProgress } from './write-progress';
import { isStoreUnavailable } from '../unavailable';

export { endedNotices } from './worker-protocol';

export interface NodeDeps {
  nodeId: string;
  store: NodeStore;
  clock: Clock;
  timers: Timers;
  config?: Partial<NodeConfig>;
  /**
   * Every lifecycle event, for logs, at this node's own clock; the node also persists them
   * to the store's event log. `span` is the run's or job attempt's span the event is about,
   * when tracing is on, so a log line can carry its trace and span ids.
   */
  onEvent?: (event: Omit<NewEvent, 'at'> & { at: number }, span?: TraceSpan) => void;
  /**
   * Unexpected errors of background loops (they keep running). The store being unavailable
   * is not one: an outage is told once through `onLog` when it begins and once when it ends.
   */
  onError?: (where: string, err: unknown) => void;
  /** The node's own log lines: a store outage's start and end, a store call that got no answer. */
  onLog?: (level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown>) => void;
  /** How notifications are sent; without it the node queues and delivers none (the simulator has no network). */
  notify?: NotifyIo;
  /** Where spans go (packages/telemetry binds it to OpenTelemetry); none when absent or not enabled. */
  tracing?: Tracing;
}

/**
 * One scheduler process's logic, bound to a store, a clock and timers. It contends for
 * every shard, leads those it wins, ticks and dispatches for them, and serves the worker
 * protocol (poll, renew, complete, fail, hand back). The HTTP server in apps/scheduler
 * and the simulator both drive this same class, and make the worker calls on its
 * `protocol`.
 *
 * Its parts: Leadership (acquiring, renewing, sharing and releasing shards, and the
 * ShardLeaders), Dispatcher (dispatch rounds and their grants), WorkerProtocol (the
 * worker calls) and DueRuns (the tick). This class composes them, runs their loops and
 * buffers the node's events for the store's event log.
 */
export class SchedulerNode {
  readonly nodeId: string;
  readonly config: NodeConfig;
  readonly pool: WorkerPool;
  readonly metrics = new NodeMetrics();
  private readonly store: NodeStore;
  private readonly clock: Clock;
  private readonly timers: Timers;
  private readonly leadership: Leadership;
  private readonly dispatcher: Dispatcher;
  /** The worker calls (register, poll, renew, results, upstream reads), which the HTTP API and the simulator's workers make. */
  readonly protocol: WorkerProtocol;
  private readonly cancels: (() => void)[] = [];
  private unsubscribe: (() => Promise<void>) | null = null;
  private readonly events: EventBuffer;
  private stopped = false;
  private readonly dueRuns: DueRuns;
  private readonly notifier: Notifier | null;
  /** The run and job attempt spans; null with tracing off, so that no hook builds anything. */
  private readonly traces: RunTraces | null;
  private readonly watcher: NotificationWatcher | null;
  private readonly storeWatch: StoreWatch;
  private readonly writeProgress: WriteProgress;
  /** When the node last replaced its store connections, so a long stall replaces them once per deadline. */
  private lastReconnectMs = Number.NEGATIVE_INFINITY;

  constructor(private readonly deps: NodeDeps) {
    this.nodeId = deps.nodeId;
    this.clock = deps.clock;
    this.timers = deps.timers;
    this.config = checkNodeConfig({ ...DEFAULT_NODE_CONFIG, ...deps.config });
    // The node's id and the moment it started make its batch keys its own, across restarts too.
    this.events = new EventBuffer((dropped) => this.metrics.inc('events_dropped_total', dropped), undefined, `${this.nodeId}@${this.clock.nowMs()}:`);
    this.storeWatch = new StoreWatch(this.clock, this.config.storeCallTimeoutMs, {
      stalled: (method, waitedMs, failed) => this.storeStalled(method, waitedMs, failed),
      outageBegan: (method, err) => {
        this.metrics.inc('store_outages_total');
        this.metrics.set('store_unavailable', 1);
        this.deps.onLog?.('warn', 'the database is unavailable; waiting for it', { call: method, error: err.message });
        this.emit({ type: 'store:unavailable', nodeId: this.nodeId, data: { call: method, error: err.message } });
      },
      outageEnded: (durationMs, failedCalls) => {
        this.metrics.set('store_unavailable', 0);
        this.metrics.inc('store_outage_ms_total', durationMs);
        this.deps.onLog?.('warn', 'the database is available again', { outageMs: durationMs, failedCalls });
        this.emit({ type: 'store:available', nodeId: this.nodeId, data: { outageMs: durationMs, failedCalls } });
      },
    });
    // The result-write path as a whole gets one call deadline to show progress (WriteProgress).
    this.writeProgress = new WriteProgress(this.clock, this.config.storeCallTimeoutMs, {
      stalled: (stalledMs, waiting) => this.writesStalled(stalledMs, waiting),
      stillStalled: (stalledMs, waiting) => {
        this.metrics.inc('result_write_giveups_total');
        this.deps.onLog?.('error', "result writes still make no progress; giving up this node's shards", {
          stalledMs,
          resultsWaiting: waiting,
          shards: this.leadership.ledShards().length,
        });
        void this.leadership.giveUpAll('write-stall').catch((err: unknown) => this.error('write-stall', err));
      },
      progressed: (stalledMs) => {
        this.metrics.set('result_writes_stalled', 0);
        this.deps.onLog?.('warn', 'result writes make progress again', { stalledMs });
        this.emit({ type: 'store:writes-moving', nodeId: this.nodeId, data: { stalledMs } });
      },
    });
    // Every call the node makes to the store has a deadline (StoreWatch), whichever part makes it.
    this.store = this.storeWatch.wrap(deps.store);
    const traces = (this.traces = deps.tracing?.enabled ? new RunTraces(deps.tracing, (n) => this.metrics.inc('trace_spans_dropped_total', n)) : null);
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
        for (const job of jobs) void this.protocol.handBack(job.jobId, job.fence, workerId, RELEASE_REASONS.unclaimed).catch(() => undefined);
      },
      ...(traces ? { onDelivered: (workerId: WorkerId, items: PollItem[]) => traces.delivered(workerId, items) } : {}),
    });
    this.notifier = deps.notify
      ? new Notifier({
          store: this.store,
          io: deps.notify,
          clock: this.clock,
          tokens: () => this.leadership.loadedLeaders().map((l) => l.token),
          metric: (key, by) => this.metrics.inc(key, by),
          onError: (where, err) => this.error(where, err),
        })
      : null;
    const notifier = this.notifier;
    this.watcher = notifier
      ? new NotificationWatcher({
          store: this.store,
          tokens: () => this.leadership.loadedLeaders().map((l) => l.token),
          lowestLedShard: () => this.leadership.lowestLedShard(),
          workerLiveWindowMs: this.config.workerLiveWindowMs,
          queued: (token, created) => notifier.queued(token, created),
          failed: (where, err) => notifier.failed(where, null, err),
        })
      : null;
    const context: NodeContext = {
      nodeId: this.nodeId,
      notifications: this.notifier ?? undefined,
      config: this.config,
      store: this.store,
      clock: this.clock,
      timers: this.timers,
      pool: this.pool,
      metrics: this.metrics,
      emit: (event) => this.emit(event),
      error: (where, err) => this.error(where, err),
      stopped: () => this.stopped,
      traces,
    };
    this.leadership = new Leadership(
      context,
      () => this.kick(),
      () => this.writeProgress.standingAside(),
    );
    this.dispatcher = new Dispatcher(context, {
      loadedLeaders: () => this.leadership.loadedLeaders(),
      allLeaders: () => this.leadership.all(),
      storeNowMs: () => this.storeNowMs(),
      handBack: (jobId, fence, workerId, reason) => this.protocol.handBack(jobId, fence, workerId, reason),
    });
    this.protocol = new WorkerProtocol(context, {
      leader: (shard) => this.leadership.leader(shard),
      hasReadyWork: () => this.dispatcher.hasReadyWork(),
      kick: () => this.kick(),
      writes: this.writeProgress,
    });
    this.dueRuns = new DueRuns({
      store: this.store,
      clock: this.clock,
      timers: this.timers,
      config: this.config,
      metrics: this.metrics,
      leaders: () => this.leadership.loadedLeaders(),
      leaderOf: (shard) => this.leadership.active(shard),
      onError: (where, err) => this.error(where, err),
    });
  }

  async start(): Promise<void> {
    // The watch goes first: it is what fails a store call that never gets an answer, and a
    // call of the start itself may be one (a connection half-open when the node comes up).
    // Armed after them, a start whose first call stuck would wait for ever, neither leading
    // nor exiting for its supervisor to start it again.
    this.loop('store-watch', Math.min(1000, Math.ceil(this.config.storeCallTimeoutMs / 4)), async () => this.watchStore());
    const { shardCount } = await this.store.initCluster(this.config.shardCount);
    this.config.shardCount = shardCount;
    this.unsubscribe = await this.store.subscribe((n) => void this.onNotice(n).catch((e) => this.error('notice', e)));
    await this.leadership.contend();
    this.loop('renew-leadership', this.config.shardRenewIntervalMs, () => this.leadership.renew());
    this.loop('acquire-leadership', this.config.tickIntervalMs, () => this.leadership.contend());
    this.loop('tick', this.config.tickIntervalMs, () => this.tick());
    this.loop('sweep', this.config.sweepIntervalMs, () => this.sweep());
    this.loop('reconcile', this.config.reconcileIntervalMs, () => this.reconcile());
    this.loop('backfills', this.config.tickIntervalMs, () => this.advanceBackfills());
    this.loop('heartbeat', this.config.workerHeartbeatIntervalMs, () => this.heartbeat());
    this.loop('events', this.config.eventFlushIntervalMs, () => this.flushEvents());
    const notifier = this.notifier;
    if (notifier) this.loop('notifications', this.config.tickIntervalMs, () => notifier.deliverDue());
    const watcher = this.watcher;
    // What a check queued goes out in the same turn rather than on the next delivery pass,
    // so a timed notification is told within one check interval of its time (a pass asks
    // only the shards something woke, and the store's claim keeps two passes apart).
    if (watcher && notifier) this.loop('notification-checks', this.config.notifyCheckIntervalMs, () => watcher.check().then(() => notifier.deliverDue()));
    await this.tick();
  }

  /** One tick (DueRuns), in a span of its own when tracing is on. */
  private tick(): Promise<void> {
    const tracing = this.deps.tracing;
    if (!this.traces || !tracing) return this.dueRuns.tick();
    const span = tracing.start('fenceline.tick', { attributes: { 'fenceline.node.id': this.nodeId, 'fenceline.shards.led': this.leadership.loadedLeaders().length } });
    return this.dueRuns.tick().then(
      () => span.end(),
      (err: unknown) => {
        span.end(String(err));
        throw err;
      },
    );
  }

  /** Graceful stop: releases every shard so a standby takes over at once. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    for (const cancel of this.cancels) cancel();
    this.dispatcher.stop();
    this.dueRuns.stop();
    for (const w of this.pool.live()) this.pool.cancel(w.id);
    // Leases granted but not yet delivered would wait out their TTL with nobody to run or
    // renew them: they go back now, while this node still leads their shards.
    await Promise.all(this.pool.takeAllOutboxes().map(({ workerId, jobs }) => this.handBackUndelivered(workerId, jobs, RELEASE_REASONS.nodeStopped)));
    // Leave first: a node that still counted this one would take its shards only at the
    // grace, not on its next tick.
    await this.store.leaveCluster(this.nodeId).catch(() => undefined);
    for (const leader of this.leadership.all()) await this.leadership.handOff(leader, 'stop');
    this.leadership.clear();
    await this.flushEvents().catch(() => undefined);
    await this.unsubscribe?.().catch(() => undefined);
  }

  /**
   * Hands back leases granted to a worker that never received them (its poll's answer
   * found it gone, or the node stopped before it came back for them), so the jobs are
   * ready again at once instead of after the lease TTL.
   */
  async handBackUndelivered(workerId: WorkerId, items: PollItem[], reason: string = RELEASE_REASONS.hungUp): Promise<void> {
    // A revocation that did not reach its worker needs nothing: its next renewal is refused.
    const jobs = items.filter((item): item is Assignment => !isRevocation(item));
    if (jobs.length === 0) return;
    this.metrics.inc('leases_undelivered_total', jobs.length);
    await Promise.all(jobs.map((job) => this.protocol.handBack(job.jobId, job.fence, workerId, reason).catch(() => undefined)));
  }

  ledShards(): number[] {
    return this.leadership.ledShards();
  }

  leader(shard: number): ShardLeader | undefined {
    return this.leadership.leader(shard);
  }

  /** The store's clock as this node estimates it (offset measured on every tick). */
  storeNowMs(): number {
    return this.dueRuns.storeNowMs();
  }

  /** Requests a dispatch round on the next turn. */
  kick(): void {
    this.dispatcher.kick();
  }

  // ---- sweeps, reconciliation, notices (the tick is DueRuns) ----------------------------

  private async sweep(): Promise<void> {
    for (const leader of this.leadership.loadedLeaders()) {
      const swept = await leader.sweep(1000);
      this.metrics.inc('leases_expired_total', swept.length);
    }
  }

  private async reconcile(): Promise<void> {
    for (const leader of this.leadership.loadedLeaders()) await leader.reconcile();
    for (const gone of this.pool.expire()) this.emit({ type: 'worker:gone', workerId: gone, nodeId: this.nodeId });
  }

  /**
   * One pass over the open backfills of every shard this node leads, read in one
   * statement by index; each leader advances or settles its own. Every tick, since a
   * backfill's room comes back as its runs finish, and at once when a notice says one was
   * created or cancelled.
   */
  private async advanceBackfills(): Promise<void> {
    const leaders = this.leadership.loadedLeaders();
    if (leaders.length === 0) return;
    const open = await this.store.openBackfills(leaders.map((l) => l.token));
    const byShard = new Map(leaders.map((l) => [l.shard, l]));
    await Promise.all(open.map((b) => byShard.get(b.shard)?.advanceBackfill(b)));
  }

  private async heartbeat(): Promise<void> {
    // Each worker with how long this node has not heard from it, so the store records when
    // it was last heard, not when this node last wrote: a worker that dies keeps the
    // last_seen of its death however long it stays in this node's live list.
    const beats = this.pool.beats();
    // A polling worker's row this node or another refreshed less than `skip` ago is left
    // alone. It is then at most skip + one interval old when it is next written, which must
    // stay inside the live window the console reads it with; short windows (tests) skip
    // nothing.
    const interval = this.config.workerHeartbeatIntervalMs;
    const skip = Math.max(0, Math.min(interval, this.config.workerLiveWindowMs - 2 * interval));
    if (beats.length > 0) await this.store.heartbeatWorkers(beats, this.nodeId, skip);
  }

  private async onNotice(n: StoreNotice): Promise<void> {
    // Credential notices are for the process's worker authentication, not for a leader.
    if (n.kind === 'credential-revoked') return;
    const leader = this.leadership.leader(n.shard);
    if (!leader) return;
    if (n.kind === 'run-queued') {
      // The notice carries the run; reading it back is only for senders that leave it out.
      const at = n.scheduledAt ? new Date(n.scheduledAt) : null;
      const run: RunRow =
        n.dagId && n.dagVersion && n.params && at && !Number.isNaN(at.getTime())
          ? {
              id: n.runId,
              dagId: n.dagId,
              dagVersion: n.dagVersion,
              shard: n.shard,
              scheduledAt: at,
              trigger: 'manual',
              state: 'queued',
              createdAt: at,
              startedAt: null,
              endedAt: null,
              params: n.params,
            }
          : await this.store.getRun(n.runId);
      await leader.adoptQueued(run);
    } else if (n.kind === 'run-action') {
      // A leader still loading applies every pending action once it has loaded.
      if (leader.loaded) await leader.applyPendingActions();
    } else if (n.kind === 'job-ended') {
      await leader.resyncMany((n.jobIds ?? [n.jobId]).filter((id) => leader.hasJob(id)));
    } else if (n.kind === 'backfill-changed') {
      await this.advanceBackfills();
    }
  }

  // ---- plumbing ---------------------------------------------------------------------------

  /**
   * Buffers an event stamped now by the store's clock (as this node estimates it): the
   * buffer is written every eventFlushIntervalMs, and the console draws run timelines from
   * these stamps, which must say when things happened, not when the batch was written.
   */
  emit(event: NewEvent): void {
    const withNode = { nodeId: this.nodeId, ...event, at: event.at ?? new Date(this.storeNowMs()) };
    this.events.push(withNode);
    const onEvent = this.deps.onEvent;
    if (!onEvent) return;
    if (this.traces) onEvent({ ...withNode, at: this.clock.nowMs() }, this.traces.spanOf(event));
    else onEvent({ ...withNode, at: this.clock.nowMs() });
  }

  /** Writes the buffered events; a batch whose write fails is kept for the next flush. */
  private flushEvents(): Promise<void> {
    return this.events.flush((batch, key) => this.store.appendEvents(batch, key));
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
    // An outage is logged where it begins and ends (StoreWatch), not once per failed call.
    if (isStoreUnavailable(err)) return;
    this.deps.onError?.(where, err);
  }

  /** Fails the store calls past their deadline and publishes how many are waiting. */
  private watchStore(): void {
    this.storeWatch.check();
    this.writeProgress.check();
    const { calls, oldestMs } = this.storeWatch.pending();
    this.metrics.set('store_calls_waiting', calls);
    this.metrics.set('store_oldest_call_ms', oldestMs);
  }

  /**
   * Results have waited a whole call deadline and no write of them was answered: whether
   * the calls hang, fail at once, or never leave the node, its connections are replaced
   * (once per deadline, as for a stalled call); a window later, still stuck, it gives up
   * its shards (WriteProgress).
   */
  private writesStalled(stalledMs: number, waiting: number): void {
    this.metrics.inc('result_write_stalls_total');
    this.metrics.set('result_writes_stalled', 1);
    this.emit({ type: 'store:writes-stalled', nodeId: this.nodeId, data: { stalledMs, resultsWaiting: waiting } });
    const now = this.clock.nowMs();
    const reconnect = this.deps.store.reconnect !== undefined && now - this.lastReconnectMs >= this.config.storeCallTimeoutMs;
    this.deps.onLog?.('error', `result writes made no progress for ${stalledMs} ms`, {
      stalledMs,
      resultsWaiting: waiting,
      action: reconnect ? 'replacing the store connections' : 'the store connections were just replaced',
    });
    if (!reconnect) return;
    this.lastReconnectMs = now;
    this.metrics.inc('store_reconnects_total');
    void this.deps.store.reconnect!().catch((err: unknown) => this.deps.onLog?.('error', 'replacing the store connections failed', { error: String(err) }));
  }

  /**
   * A store call got no answer within its deadline. The connection it was sent on is
   * presumed lost without word (a primary gone with its machine, a half-open socket), and
   * so may be the others opened before it: the store is asked to replace its connections,
   * once per deadline at most, and every call still waiting on the old ones fails as
   * unavailable, to be tried again on the new ones.
   */
  private storeStalled(method: string, waitedMs: number, failed: number): void {
    this.metrics.inc('store_calls_timed_out_total', failed);
    const now = this.clock.nowMs();
    const reconnect = this.deps.store.reconnect !== undefined && now - this.lastReconnectMs >= this.config.storeCallTimeoutMs;
    this.deps.onLog?.('error', `the database did not answer ${method} within ${this.config.storeCallTimeoutMs} ms`, {
      call: method,
      waitedMs,
      callsFailed: failed,
      action: reconnect ? 'replacing the store connections' : 'failed the calls; they are tried again',
    });
    if (!reconnect) return;
    this.lastReconnectMs = now;
    this.metrics.inc('store_reconnects_total');
    void this.deps.store.reconnect!().catch((err: unknown) => this.deps.onLog?.('error', 'replacing the store connections failed', { error: String(err) }));
  }
}
