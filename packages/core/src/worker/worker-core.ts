import type { WorkerOffer } from '../routing/offer';
import { FencelineError, LeaseLostError } from '../errors';
import type { Assignment } from '../engine/worker-pool';
import type { ReleaseCause } from '../engine/revocation';
import type { RenewOutcome } from '../store';
import { effectsProblem, type EffectRecord } from '../input/effect-reports';
import { retryDelayAfter } from './backoff';
import { failureOf, type JobFailure } from './job-end';
import { knownRunTimeMs } from './known-run-time';
import { LazyAbort } from './lazy-abort';
import { LogStream } from './log-stream';
import { viaThenOthers } from './node-order';
import { emptyWorkerStats, type FailureToSend, type JobEnd, type OpenPoll, type ReleaseToSend, type WorkerStats } from './protocol';
import { ResultQueue } from './result-queue';
import { failureBytes, RELEASE_BYTES } from './result-batch';
import { WriteQueue } from './write-queue';
import { Renewals } from './renewals';
import type { DueLease, RunningJob } from './running-job';
import { storableEnd } from './storable-end';
import type { WorkerCoreDeps } from './worker-deps';
import { traceLogFields, type Tracing, type TraceSpan } from '../tracing';

export type { WorkerCoreDeps } from './worker-deps';

/** How long a stop waits for results already being written, after its grace. */
const WRITES_SETTLE_MS = 5_000;

/**
 * The worker's decisions, free of any clock, timer, wire or handler of its own: one loop
 * per scheduler node that registers and then long-polls it, so a node that is down does
 * not hold up the others; jobs in slots, with the excess of two nodes filling the same
 * free slot handed back; leases renewed (see Renewals) and a job aborted, writing
 * nothing, once its lease is lost; results written with their fence (successes batched
 * per node, see ResultQueue), and retried while no node answers; a graceful stop that
 * hands back what cannot finish. apps/worker runs it over HTTP with real timers and the
 * job handlers; the simulator over its links with virtual time and drawn job outcomes.
 */
export class WorkerCore {
  readonly stats: WorkerStats;
  private readonly running = new Map<string, RunningJob>();
  private readonly polls = new Map<number, OpenPoll>();
  private readonly renewals: Renewals;
  private readonly results: ResultQueue;
  private readonly failures: WriteQueue<FailureToSend>;
  private readonly releases: WriteQueue<ReleaseToSend>;
  /** Poll loops waiting for a free slot; each is woken when a job leaves its slot. */
  private slotWaiters: (() => void)[] = [];
  /** Woken whenever the slots empty. */
  private emptyWaiters: (() => void)[] = [];
  /** Jobs whose result is being written. */
  private finishing = 0;
  private stopping = false;
  private halted = false;
  private stopDone: Promise<void> | null = null;

  constructor(private readonly deps: WorkerCoreDeps) {
    if (deps.transport.nodeCount < 1) throw new Error('at least one scheduler node is required');
    this.stats = deps.stats ?? emptyWorkerStats();
    this.renewals = new Renewals({
      workerId: deps.workerId,
      clock: deps.clock,
      timers: deps.timers,
      transport: deps.transport,
      running: this.running,
      agent: deps.renewalAgent,
      lose: (r, why) => this.lose(r, why),
      onRefused: (code, r) => deps.onRefused?.(code, 'renew', r.job),
      log: deps.log,
    });
    const defer = deps.defer ?? ((fn: () => void) => void Promise.resolve().then(fn));
    this.results = new ResultQueue({
      workerId: deps.workerId,
      transport: deps.transport,
      timers: deps.timers,
      defer,
      halted: () => this.halted,
      limits: deps.resultLimits,
      log: deps.log,
    });
    // Failures and hand-backs go in batches as results do, each still fenced and answered
    // on its own. A failure is sent until a node takes it, as a result is; a hand-back is
    // tried once on each node, since a lease nobody takes back runs out by itself.
    this.failures = new WriteQueue<FailureToSend>({
      nodeCount: deps.transport.nodeCount,
      call: (node, failures) => deps.transport.failMany(node, { workerId: deps.workerId, failures }),
      bytes: failureBytes,
      timers: deps.timers,
      defer,
      halted: () => this.halted,
      limits: deps.resultLimits,
      log: deps.log,
      noun: 'failures',
    });
    this.releases = new WriteQueue<ReleaseToSend>({
      nodeCount: deps.transport.nodeCount,
      call: (node, releases) => deps.transport.releaseMany(node, { workerId: deps.workerId, releases }),
      bytes: () => RELEASE_BYTES,
      timers: deps.timers,
      defer,
      halted: () => this.halted,
      limits: deps.resultLimits,
      log: deps.log,
      noun: 'hand-backs',
      retry: false,
    });
  }

  /**
   * Slots not taken by a job at work. A job whose result is being written no longer
   * counts: the node that takes the result credits the slot to our open poll at once, so
   * new work may arrive before the write's answer does.
   */
  get free(): number {
    return Math.max(0, this.deps.slots - (this.running.size - this.finishing));
  }

  /** The offer field of a register or poll: left out for a worker that makes the default offer. */
  private offerField(): { offer?: WorkerOffer } {
    return this.deps.offer ? { offer: this.deps.offer } : {};
  }

  /** Jobs in the slots, their results being written included. */
  get busy(): number {
    return this.running.size;
  }

  /** Set once the worker takes no more work (stopping, stopped or halted). */
  get stopped(): boolean {
    return this.stopping;
  }

  runningJobs(): Assignment[] {
    return [...this.running.values()].map((r) => r.job);
  }

  /**
   * Starts one loop per node and resolves once any node has accepted us. A typed refusal
   * (a wrong token, say) from every node rejects, since retrying cannot fix it.
   */
  start(): Promise<void> {
    const n = this.deps.transport.nodeCount;
    return new Promise<void>((resolve, reject) => {
      let refused = 0;
      for (let i = 0; i < n; i++) {
        void this.pollLoop(i, resolve).catch((err: unknown) => {
          if (++refused === n) reject(err);
        });
      }
    });
  }

  /**
   * Takes no new work and empties the slots within the shutdown grace, so the process can
   * end without leaving a lease to expire. A job known to run past the grace (a sleep
   * longer than what is left of it) is aborted and handed back at once, so another worker
   * can start it now rather than after the grace; every other job may finish within the
   * grace, and whatever still runs when it ends is aborted and handed back. Leases are
   * renewed all the while. Resolves once no job is left (or results being written have
   * had a few more seconds to settle).
   */
  stop(): Promise<void> {
    this.stopDone ??= this.stopGracefully();
    return this.stopDone;
  }

  /** The process is gone (crashed, killed): nothing more is sent, nothing is handed back. */
  halt(): void {
    this.stopping = true;
    this.halted = true;
    this.renewals.stop();
    this.wakeSlotWaiters();
  }

  // ---- renewals by an agent (see Renewals) ---------------------------------------------------

  /** The leases due now, for the agent to renew; they are not handed out again until answered. */
  takeDueLeases(): DueLease[] {
    return this.renewals.takeDue();
  }

  /** The agent's answers for our leases; then says when the next lease falls due. */
  renewed(outcomes: readonly RenewOutcome[]): void {
    this.renewals.renewed(outcomes);
  }

  /** The agent got no answer for these leases. */
  notRenewed(leases: readonly DueLease[]): void {
    this.renewals.notRenewed(leases);
  }

  /** Tells the agent (or our own loop) when the next lease not now being renewed falls due. */
  scheduleRenewals(): void {
    this.renewals.schedule();
  }

  // ---- polling -----------------------------------------------------------------------------

  private async registerWith(i: number): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        this.renewals.timing = await this.deps.transport.register(i, { workerId: this.deps.workerId, slots: this.deps.slots, ...this.offerField() });
        return;
      } catch (err) {
        if (err instanceof FencelineError) throw err;
        if (attempt % 10 === 0) this.deps.log?.('warn', 'scheduler not reachable yet; retrying', { node: i, error: String(err) });
        await this.sleep(retryDelayAfter(err, attempt));
      }
    }
  }

  /** One long poll at a time per node; answered the moment a lease is granted to us. */
  private async pollLoop(i: number, onRegistered: () => void): Promise<void> {
    await this.registerWith(i);
    onRegistered();
    let failures = 0;
    while (!this.stopping) {
      if (this.free === 0) {
        await new Promise<void>((resolve) => this.slotWaiters.push(resolve));
        continue;
      }
      const poll = this.deps.transport.poll(i, { workerId: this.deps.workerId, slots: this.deps.slots, free: this.free, waitMs: this.deps.pollWaitMs, ...this.offerField() });
      this.polls.set(i, poll);
      try {
        const jobs = await poll.answer;
        failures = 0;
        for (const item of jobs) {
          if ('revoked' in item) this.revoked(item.jobId, item.fence);
          else this.accept(item, i);
        }
        // Our polls on the other nodes still offer the slots these jobs just took, and are
        // left open all the same: cutting a poll whose answer is already on the wire loses
        // that answer, and its leases would sit unrun until they expire. A node that fills
        // slots we no longer have gets the excess handed back at once (accept).
        if (jobs.length > 0) this.offerChanged();
      } catch (err) {
        if (this.stopping) break;
        if (err instanceof FencelineError && err.code === 'UNAUTHORIZED') {
          // Another process registered our worker id since: the leases are its now, and
          // registering again would take them from it. This process takes no more work here.
          this.deps.log?.('error', 'poll refused: another process registered this worker id; taking no more work from this node', { node: i, error: err.message });
          break;
        }
        failures++;
        if (failures === 1 || failures % 20 === 0) this.deps.log?.('warn', 'poll failed; retrying', { node: i, error: String(err) });
        await this.sleep(retryDelayAfter(err, failures));
        // A restarted node forgets us; registering again is idempotent.
        await this.registerWith(i).catch(() => undefined);
      } finally {
        if (this.polls.get(i) === poll) this.polls.delete(i);
      }
    }
  }

  private accept(job: Assignment, via: number): void {
    this.renewals.timing = { renewIntervalMs: job.renewIntervalMs, leaseTtlMs: job.leaseTtlMs };
    if (this.free === 0 || this.stopping) {
      // Two nodes may both fill our free slots at the same instant; hand the excess back.
      const reason: ReleaseCause = this.stopping ? 'stopping' : 'no-free-slot';
      if (this.halted) return;
      this.releases.send(via, { jobId: job.jobId, fence: job.fence, reason }).then(
        () => this.stats.handedBack++,
        (err: unknown) => this.refused(err, 'release', job),
      );
      return;
    }
    const now = this.deps.clock.nowMs();
    const tracing = this.deps.tracing;
    const r: RunningJob = {
      job,
      via,
      controller: new LazyAbort(),
      startedMs: now,
      lost: false,
      finishing: false,
      renewing: false,
      lastRenewedMs: now,
      logStream: new LogStream(),
      span: tracing?.enabled ? this.jobSpan(tracing, job) : null,
    };
    this.running.set(job.jobId, r);
    this.stats.started++;
    this.renewals.leaseTaken(r);
    void this.runJob(r);
  }

  // ---- jobs ----------------------------------------------------------------------------------

  /**
   * The accepted outputs of a job's upstream tasks, read with its fence from the node that
   * delivered it (or any other): a job without dependencies asks nothing, so the hot path
   * of most jobs costs no extra call.
   */
  private async upstreamOf(r: RunningJob): Promise<Record<string, { output: unknown }>> {
    const taskIds = r.job.task.dependsOn;
    if (taskIds.length === 0) return {};
    const req = { workerId: this.deps.workerId, jobId: r.job.jobId, fence: r.job.fence, taskIds };
    const outputs = await viaThenOthers(this.deps.transport.nodeCount, r.via, (node) => this.deps.transport.upstream(node, req));
    return Object.fromEntries(outputs.map((o) => [o.taskId, { output: o.output }]));
  }

  /**
   * This worker's span of a job: a child of the attempt's span on the node, through the
   * trace context its lease carried (a lease without one starts a trace of its own).
   */
  private jobSpan(tracing: Tracing, job: Assignment): TraceSpan {
    const span = tracing.start('fenceline.job.run', {
      ...(job.traceparent ? { parent: job.traceparent } : {}),
      kind: 'consumer',
      attributes: {
        'fenceline.job.id': job.jobId,
        'fenceline.run.id': job.runId,
        'fenceline.dag.id': job.dagId,
        'fenceline.task.id': job.taskId,
        'fenceline.task.type': job.task.type,
        'fenceline.job.attempt': job.attempt,
        'fenceline.job.fence': job.fence,
        'fenceline.worker.id': this.deps.workerId,
      },
    });
    span.event('running');
    return span;
  }

  /** What a log line about a job carries: its ids and, when traced, its trace and span ids. */
  private jobLogFields(r: RunningJob): Record<string, unknown> {
    return { job_id: r.job.jobId, run_id: r.job.runId, ...traceLogFields(r.span?.traceparent() ?? r.job.traceparent) };
  }

  private async runJob(r: RunningJob): Promise<void> {
    const { job, controller } = r;
    let end: JobEnd;
    let cancelTimeout: (() => void) | null = null;
    try {
      const running = this.deps.executor.run(job, {
        get signal() {
          return controller.signal;
        },
        checkFence: () => this.renewals.checkFence(r),
        log: (line) => r.logStream.append(line),
        upstream: () => this.upstreamOf(r),
        traceparent: r.span ? r.span.traceparent() : job.traceparent,
      });
      // Armed after the handler started, so a job that ends exactly at its timeout has ended.
      if (job.task.timeoutMs > 0) cancelTimeout = this.deps.timers.after(job.task.timeoutMs, () => controller.abort(new Error(`timed out after ${job.task.timeoutMs} ms`)));
      end = await running;
    } catch (err) {
      end = { ok: false, error: err, retryable: true, logs: null };
    } finally {
      cancelTimeout?.();
    }
    // A job whose lease is lost writes nothing: another worker may hold it now.
    if (r.lost || this.halted) {
      r.span?.end(this.halted ? 'the worker halted' : 'the lease was lost');
      this.leaveSlot(job.jobId);
      return;
    }
    const send = storableEnd(job.jobId, (end.ok ? end.output : null) ?? null, failureOf(end, controller), end.logs);
    const effects = this.effectsToSend(r, end);
    r.finishing = true;
    this.finishing++;
    this.wakePollers();
    r.span?.event('result', { 'fenceline.job.outcome': send.kind });
    try {
      if (send.kind === 'failure') {
        await this.sendFailure(r, send.failure, send.logs, effects);
        this.stats.failed++;
        r.span?.end(send.failure.error);
      } else {
        await this.results.send(r.via, { jobId: job.jobId, fence: job.fence, output: send.output, logs: send.logs, ...(effects ? { effects } : {}) });
        this.stats.succeeded++;
        r.span?.end();
      }
    } catch (err) {
      r.span?.end(`result write refused: ${String(err)}`);
      this.refused(err, send.kind === 'failure' ? 'fail' : 'complete', job);
      this.deps.log?.(err instanceof FencelineError ? 'warn' : 'error', 'result write refused', {
        jobId: job.jobId,
        fence: job.fence,
        code: err instanceof FencelineError ? err.code : undefined,
        error: String(err),
        ...this.jobLogFields(r),
      });
    } finally {
      this.finishing--;
      this.leaveSlot(job.jobId);
    }
  }

  /**
   * The effect outcomes to send with the job's result, or undefined for none. Reports the
   * store would refuse are dropped (and logged) here, since a refused item would lose the
   * job's result along with them.
   */
  private effectsToSend(r: RunningJob, end: JobEnd): EffectRecord[] | undefined {
    if (!end.effects || end.effects.length === 0) return undefined;
    const problem = effectsProblem(r.job.jobId, end.effects);
    if (problem === null) return end.effects;
    this.deps.log?.('warn', 'effect reports dropped: the store would refuse them', { jobId: r.job.jobId, error: problem.message, ...this.jobLogFields(r) });
    return undefined;
  }

  /** Writes a failure with its fence, in the failures' next batch; while no node answers, it is sent again after a pause. */
  private sendFailure(r: RunningJob, failure: JobFailure, logs: string | null, effects: EffectRecord[] | undefined): Promise<void> {
    const { job } = r;
    return this.failures.send(r.via, { jobId: job.jobId, fence: job.fence, error: failure.error, retryable: failure.retryable, logs, ...(effects ? { effects } : {}) });
  }

  private refused(err: unknown, op: 'complete' | 'fail' | 'release', job: Assignment): void {
    if (!(err instanceof FencelineError)) return;
    this.stats.refusedWrites++;
    this.deps.onRefused?.(err.code, op, job);
  }

  /** A node told us an operator revoked a lease we hold: stop the job now, write nothing. */
  private revoked(jobId: string, fence: number): void {
    const r = this.running.get(jobId);
    if (r && r.job.fence < fence) this.lose(r, `revoked by the scheduler (an operator's action raised the fence to ${fence})`);
  }

  private lose(r: RunningJob, why: string): void {
    if (r.lost) return;
    r.lost = true;
    this.stats.lost++;
    this.deps.log?.('warn', 'lease lost: aborting job, writing nothing', { jobId: r.job.jobId, fence: r.job.fence, why, ...this.jobLogFields(r) });
    r.controller.abort(new LeaseLostError(why, { jobId: r.job.jobId, fence: r.job.fence }));
  }

  // ---- slots ---------------------------------------------------------------------------------

  /** Frees a job's slot and wakes whoever waits for one. */
  private leaveSlot(jobId: string): void {
    if (!this.running.delete(jobId)) return;
    this.wakePollers();
    if (this.running.size === 0) {
      const waiters = this.emptyWaiters;
      this.emptyWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  private wakePollers(): void {
    this.wakeSlotWaiters();
    this.offerChanged();
  }

  private wakeSlotWaiters(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const wake of waiters) wake();
  }

  /** Tells every open poll the free slots we have now. */
  private offerChanged(): void {
    const free = this.free;
    for (const p of this.polls.values()) p.offerChanged?.(free);
  }

  // ---- stopping ------------------------------------------------------------------------------

  private async stopGracefully(): Promise<void> {
    this.stopping = true;
    for (const p of this.polls.values()) p.hangUp(new Error('worker stopping'));
    this.wakeSlotWaiters();
    const deadline = this.deps.clock.nowMs() + (this.deps.shutdownGraceMs ?? 30_000);
    await this.handBack([...this.running.values()].filter((r) => this.knownEndMs(r) > deadline));
    await this.emptyOrAt(deadline);
    await this.handBack([...this.running.values()]);
    // Results still being written settle on their own; their answers come within moments.
    await this.emptyOrAt(this.deps.clock.nowMs() + WRITES_SETTLE_MS);
    this.renewals.stop();
  }

  /** When a job will end by its own config, where that is known; never for the others. */
  private knownEndMs(r: RunningJob): number {
    const runTime = knownRunTimeMs(r.job.task);
    return runTime === null ? Number.NEGATIVE_INFINITY : r.startedMs + runTime;
  }

  /**
   * Aborts jobs and gives their leases back with the fenced release, all at once. A job
   * whose result is already being written is left to that write.
   */
  private async handBack(list: RunningJob[]): Promise<void> {
    await Promise.all(
      list
        .filter((r) => !r.finishing && !r.lost)
        .map(async (r) => {
          r.lost = true;
          r.controller.abort(new Error('worker shutting down'));
          const { job } = r;
          try {
            await this.releases.send(r.via, { jobId: job.jobId, fence: job.fence, reason: 'stopping' });
            this.stats.handedBack++;
            this.deps.log?.('info', 'job handed back on stop', { jobId: job.jobId, taskId: job.taskId, fence: job.fence, ...this.jobLogFields(r) });
          } catch (err) {
            this.deps.log?.('warn', 'could not hand a job back on stop; its lease will expire', {
              jobId: job.jobId,
              fence: job.fence,
              error: String(err),
              ...this.jobLogFields(r),
            });
          }
          this.leaveSlot(job.jobId);
        }),
    );
  }

  /** Resolves once no job is left in the slots, or at `deadlineMs` by our clock. */
  private emptyOrAt(deadlineMs: number): Promise<void> {
    if (this.running.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const cancel = this.deps.timers.after(Math.max(0, deadlineMs - this.deps.clock.nowMs()), resolve);
      this.emptyWaiters.push(() => {
        cancel();
        resolve();
      });
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.deps.timers.after(ms, resolve));
  }
}
