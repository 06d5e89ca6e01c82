import type { Assignment, RenewOutcome } from '@fenceline/core';
import { FencelineError, LeaseLostError } from '@fenceline/core';
import { schedulerClient, typedRefusal, type SchedulerClient } from './client';
import { runHttp } from './handlers/http';
import { runShell } from './handlers/shell';
import type { WorkerConfig } from './config';
import { runNoop, runSleep } from './handlers/sleep';
import { NonRetryableError, registeredTask, registeredTaskNames, type TaskContext } from './task';
import { ResultSender } from './results';

/** The worker's settings (see config.ts) plus where its log lines go. */
export type WorkerOptions = Omit<WorkerConfig, 'tasksModule'> & {
  log: (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
};

interface Running {
  job: Assignment;
  /** The node that delivered the job; its writes go there first. */
  via: number;
  controller: AbortController;
  /** Set once the lease is known lost: the job must write nothing any more. */
  lost: boolean;
  /** Its result is being written; renewing it now would only race the write. */
  finishing: boolean;
  lastRenewedMs: number;
  /** When this worker started the job, by its own clock. */
  startedMs: number;
  logs: string[];
  logChars: number;
}

const MAX_LOG_CHARS = 64 * 1024;

/**
 * A worker process: polls every scheduler node for work (each node's leaders hand their
 * shards' jobs straight to waiting workers), runs jobs in its slots, renews its leases,
 * writes each result with its fence, and stops a job the moment its lease is lost.
 */
export class Worker {
  private readonly clients: SchedulerClient[];
  private readonly running = new Map<string, Running>();
  private readonly polls = new Map<number, AbortController>();
  private renewTimer: NodeJS.Timeout | null = null;
  private readonly results: ResultSender;
  /** Poll loops waiting for a free slot; each is woken when a job leaves its slot. */
  private slotWaiters: (() => void)[] = [];
  /** Jobs whose result is being written. */
  private finishing = 0;
  private stopping = false;
  /** Set once stop() has emptied the slots: leases are renewed until then. */
  private stopped = false;
  private renewIntervalMs = 30_000;
  private leaseTtlMs = 90_000;
  readonly stats = { started: 0, succeeded: 0, failed: 0, lost: 0, refusedWrites: 0, handedBack: 0 };

  constructor(private readonly opts: WorkerOptions) {
    if (opts.schedulerUrls.length === 0) throw new Error('at least one scheduler URL is required');
    this.clients = opts.schedulerUrls.map((url) => schedulerClient(url, opts.token));
    this.results = new ResultSender(opts.workerId, this.clients);
  }

  /**
   * Slots not taken by a job at work. A job whose result is being written no longer
   * counts: the node that takes the result credits the slot to our open poll at once, so
   * new work may arrive before the write's answer does.
   */
  get free(): number {
    return Math.max(0, this.opts.slots - (this.running.size - this.finishing));
  }

  /**
   * Starts one loop per scheduler node, each registering before it polls, and resolves once
   * any node has accepted us: a node that is down at start must not hold up the others.
   * A typed refusal (a wrong token, say) rejects, since retrying cannot fix it.
   */
  async start(): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      let refused = 0;
      this.clients.forEach((_, i) => {
        void this.pollLoop(i, resolve).catch((err) => {
          if (++refused === this.clients.length) reject(err);
        });
      });
    });
    this.scheduleRenew();
  }

  /**
   * Takes no new work and empties the slots within the shutdown grace, so that the process
   * can be stopped without leaving a lease to expire. A job known to run past the grace (a
   * sleep longer than what is left of it) is aborted and handed back at once, so another
   * worker can start it now rather than after the grace; every other job may finish within
   * the grace, and whatever still runs when it ends is aborted and handed back. Leases are
   * renewed all the while. Resolves once no job is left.
   */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    for (const c of this.polls.values()) c.abort();
    const deadline = Date.now() + this.opts.shutdownGraceMs;
    await this.handBackAll([...this.running.values()].filter((r) => (this.expectedEndMs(r) ?? 0) > deadline));
    while (this.running.size > 0 && Date.now() < deadline) await sleep(50);
    await this.handBackAll([...this.running.values()]);
    // Results still being written settle on their own; their answers come within moments.
    const writesDeadline = Date.now() + 5_000;
    while (this.running.size > 0 && Date.now() < writesDeadline) await sleep(20);
    this.stopped = true;
    if (this.renewTimer) clearTimeout(this.renewTimer);
  }

  /**
   * Aborts jobs and gives their leases back with the fenced release, all at once. A job
   * whose result is already being written is left to that write.
   */
  private async handBackAll(list: Running[]): Promise<void> {
    await Promise.all(
      list
        .filter((r) => !r.finishing && !r.lost)
        .map(async (r) => {
          r.lost = true;
          r.controller.abort(new Error('worker shutting down'));
          try {
            await this.write(r, (c) => c.release.mutate({ workerId: this.opts.workerId, jobId: r.job.jobId, fence: r.job.fence, reason: 'stopping' }));
            this.stats.handedBack++;
            this.opts.log('info', 'job handed back on stop', { jobId: r.job.jobId, taskId: r.job.taskId, fence: r.job.fence });
          } catch (err) {
            this.opts.log('warn', 'could not hand a job back on stop; its lease will expire', { jobId: r.job.jobId, fence: r.job.fence, error: String(err) });
          }
          this.leaveSlot(r.job.jobId);
        }),
    );
  }

  /**
   * When a job will end by its own config, where that is known: a sleep ends after its
   * duration. Null for every other type, whose length nobody can tell in advance.
   */
  private expectedEndMs(r: Running): number | null {
    if (r.job.task.type !== 'sleep') return null;
    const duration = Number(r.job.task.config.durationMs);
    return Number.isFinite(duration) ? r.startedMs + duration : null;
  }

  private async registerWith(i: number): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        const info = await this.clients[i]!.register.mutate({ workerId: this.opts.workerId, slots: this.opts.slots, meta: { pid: process.pid, jobTypes: this.jobTypes() } });
        this.renewIntervalMs = info.renewIntervalMs;
        this.leaseTtlMs = info.leaseTtlMs;
        return;
      } catch (err) {
        const refusal = typedRefusal(err);
        if (refusal) throw refusal;
        if (attempt % 10 === 0) this.opts.log('warn', 'scheduler not reachable yet; retrying', { url: this.opts.schedulerUrls[i], error: String(err) });
        await sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
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
        await this.slotFreed();
        continue;
      }
      const controller = new AbortController();
      this.polls.set(i, controller);
      try {
        const jobs = await this.clients[i]!.poll.mutate(
          { workerId: this.opts.workerId, slots: this.opts.slots, free: this.free, waitMs: this.opts.pollWaitMs },
          { signal: controller.signal },
        );
        failures = 0;
        for (const job of jobs) this.accept(job, i);
        // Our polls on the other nodes still offer the slots these jobs just took, and are
        // left open all the same: cutting a poll whose answer is already on the wire loses
        // that answer, and its leases would sit unrun until they expire. A node that fills
        // slots we no longer have gets the excess handed back at once (accept).
      } catch (err) {
        if (this.stopping) break;
        failures++;
        if (failures === 1 || failures % 20 === 0) this.opts.log('warn', 'poll failed; retrying', { url: this.opts.schedulerUrls[i], error: String(err) });
        await sleep(Math.min(2000, 100 * 2 ** Math.min(failures, 5)));
        // A restarted node forgets us; registering again is idempotent.
        await this.registerWith(i).catch(() => undefined);
      } finally {
        this.polls.delete(i);
      }
    }
  }

  private accept(job: Assignment, via: number): void {
    this.renewIntervalMs = job.renewIntervalMs;
    this.leaseTtlMs = job.leaseTtlMs;
    if (this.free === 0 || this.stopping) {
      // Two nodes may both fill our free slots at the same instant; hand the excess back.
      const reason = this.stopping ? 'stopping' : 'no-free-slot';
      void this.clients[via]!.release.mutate({ workerId: this.opts.workerId, jobId: job.jobId, fence: job.fence, reason }).then(
        () => this.stats.handedBack++,
        () => undefined,
      );
      return;
    }
    const r: Running = { job, via, controller: new AbortController(), lost: false, finishing: false, lastRenewedMs: Date.now(), startedMs: Date.now(), logs: [], logChars: 0 };
    this.running.set(job.jobId, r);
    this.stats.started++;
    void this.runJob(r);
  }

  private async runJob(r: Running): Promise<void> {
    const { job } = r;
    const ctx: TaskContext = {
      jobId: job.jobId,
      runId: job.runId,
      dagId: job.dagId,
      taskId: job.taskId,
      attempt: job.attempt,
      fence: job.fence,
      signal: r.controller.signal,
      log: (message, fields) => this.capture(r, message, fields),
      checkFence: async () => {
        const [outcome] = await this.renewOne(r);
        if (!outcome?.ok) throw new LeaseLostError(`lease of job ${job.jobId} is no longer held (fence ${job.fence})`, { jobId: job.jobId, fence: job.fence });
      },
    };
    const timeout = job.task.timeoutMs > 0 ? setTimeout(() => r.controller.abort(new Error(`timed out after ${job.task.timeoutMs} ms`)), job.task.timeoutMs) : null;
    let output: unknown;
    let failure: { error: string; retryable: boolean } | null = null;
    try {
      output = await this.handlerFor(job.task.type)(job.task.config, ctx);
      if (r.controller.signal.aborted) throw r.controller.signal.reason;
    } catch (err) {
      // A stopped job reports why it was stopped, unless the handler's error already says so
      // in more detail (it keeps the stop's reason as its cause, as the http handler does).
      const stop: unknown = r.controller.signal.aborted ? r.controller.signal.reason : undefined;
      const reason = stop !== undefined && !(err instanceof Error && err.cause === stop) ? stop : err;
      failure = { error: reason instanceof Error ? reason.message : String(reason), retryable: !(err instanceof NonRetryableError) };
    } finally {
      if (timeout) clearTimeout(timeout);
    }
    // A job whose lease is lost writes nothing: another worker may hold it now.
    if (r.lost) {
      this.leaveSlot(job.jobId);
      return;
    }
    const logs = r.logs.join('\n') || null;
    r.finishing = true;
    this.finishing++;
    this.wakePollers();
    try {
      if (failure) {
        await this.write(r, (c) => c.fail.mutate({ workerId: this.opts.workerId, jobId: job.jobId, fence: job.fence, error: failure!.error, retryable: failure!.retryable, logs }));
        this.stats.failed++;
      } else {
        await this.results.send(r.via, { jobId: job.jobId, fence: job.fence, output: output ?? null, logs });
        this.stats.succeeded++;
      }
    } catch (err) {
      const refusal = err instanceof FencelineError ? err : typedRefusal(err);
      if (refusal) this.stats.refusedWrites++;
      this.opts.log(refusal ? 'warn' : 'error', 'result write refused', { jobId: job.jobId, fence: job.fence, code: refusal?.code, error: String(err) });
    } finally {
      this.finishing--;
      this.leaveSlot(job.jobId);
    }
  }

  /** Frees a job's slot and wakes the poll loops that were waiting for one. */
  private leaveSlot(jobId: string): void {
    this.running.delete(jobId);
    this.wakePollers();
  }

  private wakePollers(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const wake of waiters) wake();
  }

  private slotFreed(): Promise<void> {
    return new Promise((resolve) => {
      this.slotWaiters.push(resolve);
      // Stopping frees no slot, so the wait ends on its own after a while.
      setTimeout(resolve, 1000).unref();
    });
  }

  /**
   * The job types this worker runs, sent when it registers so the console can say when no
   * live worker runs a type (shell is off unless allowed; named types come from the tasks module).
   */
  private jobTypes(): string[] {
    return ['noop', 'sleep', 'http', ...(this.opts.shell.allowed ? ['shell'] : []), ...registeredTaskNames()];
  }

  private handlerFor(type: string): (config: Record<string, unknown>, ctx: TaskContext) => Promise<unknown> {
    switch (type) {
      case 'noop':
        return runNoop;
      case 'sleep':
        return runSleep;
      case 'http':
        return runHttp;
      case 'shell':
        return (config, ctx) => runShell(config, ctx, this.opts.shell);
      default: {
        const handler = registeredTask(type);
        if (!handler) return async () => Promise.reject(new NonRetryableError(`no handler for job type "${type}" on this worker`));
        return handler;
      }
    }
  }

  /** Sends a write to the delivering node, falling back to the others if it cannot be reached. */
  private async write<T>(r: Running, fn: (c: SchedulerClient) => Promise<T>): Promise<T> {
    let last: unknown;
    for (let k = 0; k < this.clients.length; k++) {
      const i = (r.via + k) % this.clients.length;
      try {
        return await fn(this.clients[i]!);
      } catch (err) {
        if (typedRefusal(err)) throw err;
        last = err;
      }
    }
    throw last;
  }

  private scheduleRenew(): void {
    if (this.stopped) return;
    this.renewTimer = setTimeout(() => void this.renewAll().finally(() => this.scheduleRenew()), Math.min(this.renewIntervalMs, 1000));
  }

  /**
   * Renews every lease due for renewal in one call per node. A refused renewal aborts the
   * job at once and marks it lost; a lease no node could renew before it ran out is lost too.
   * A worker that was paused asks first: the store, not this process's clock, decides.
   */
  private async renewAll(): Promise<void> {
    const now = Date.now();
    const due = [...this.running.values()].filter((r) => !r.lost && !r.finishing && now - r.lastRenewedMs >= this.renewIntervalMs);
    if (due.length === 0) return;
    const byNode = new Map<number, Running[]>();
    for (const r of due) byNode.set(r.via, [...(byNode.get(r.via) ?? []), r]);
    await Promise.all([...byNode.values()].map((group) => this.renewGroup(group)));
  }

  private renewOne(r: Running): Promise<RenewOutcome[]> {
    return this.renewGroup([r]);
  }

  private async renewGroup(group: Running[]): Promise<RenewOutcome[]> {
    try {
      const outcomes = (await this.write(group[0]!, (c) =>
        c.renew.mutate({ workerId: this.opts.workerId, leases: group.map((r) => ({ jobId: r.job.jobId, fence: r.job.fence })) }),
      )) as unknown as RenewOutcome[];
      const at = Date.now();
      for (const o of outcomes) {
        const r = this.running.get(o.jobId);
        if (!r) continue;
        if (o.ok) r.lastRenewedMs = at;
        else this.lose(r, `renewal refused: ${o.code}`);
      }
      return outcomes;
    } catch (err) {
      // No node answered. Once the lease has run out by our own clock it cannot be renewed
      // any more, so stop the work; the store would refuse its result anyway.
      this.opts.log('warn', 'renewal failed; will retry', { error: String(err) });
      const now = Date.now();
      for (const r of group) if (now - r.lastRenewedMs >= this.leaseTtlMs) this.lose(r, 'lease ran out before a renewal reached the scheduler');
      return [];
    }
  }

  private lose(r: Running, why: string): void {
    if (r.lost) return;
    r.lost = true;
    this.stats.lost++;
    this.opts.log('warn', 'lease lost: aborting job, writing nothing', { jobId: r.job.jobId, fence: r.job.fence, why });
    r.controller.abort(new LeaseLostError(why, { jobId: r.job.jobId, fence: r.job.fence }));
  }

  private capture(r: Running, message: string, fields?: Record<string, unknown>): void {
    const line = fields ? `${message} ${JSON.stringify(fields)}` : message;
    this.opts.log('info', line, { jobId: r.job.jobId, taskId: r.job.taskId });
    if (r.logChars + line.length > MAX_LOG_CHARS) return;
    r.logs.push(line);
    r.logChars += line.length + 1;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
