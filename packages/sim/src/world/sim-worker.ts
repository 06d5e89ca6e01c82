import { FencelineError, errorFromJSON, type Assignment, type RenewOutcome, type SchedulerNode } from '@fenceline/core';
import type { SimProcess } from '../engine/process';
import type { Rng } from '../engine/random';
import { callOver, type Link } from './link';
import type { SchedulerHost } from './scheduler-host';

/** How a job behaves when this worker runs it: how long it takes and whether it fails. */
export interface JobOutcome {
  durationMs: number;
  fail: boolean;
}

export interface SimWorkerOptions {
  id: string;
  slots: number;
  process: SimProcess;
  hosts: SchedulerHost[];
  /** One link per scheduler node, in the order of `hosts`. */
  links: Link[];
  rng: Rng;
  pollWaitMs: number;
  rpcTimeoutMs: number;
  outcome: (job: Assignment, rng: Rng) => JobOutcome;
  stats: WorkerStats;
  /** Told of every refused write the worker attempted (its fence was stale, forged or lost). */
  onRefused?: (code: string, op: string, job: Assignment) => void;
}

export interface WorkerStats {
  started: number;
  succeeded: number;
  failed: number;
  lost: number;
  refusedWrites: number;
  handedBack: number;
}

interface Running {
  job: Assignment;
  via: number;
  lost: boolean;
  lastRenewedMs: number;
  cancelRun: () => void;
  abort: (why: string) => void;
}

/**
 * A worker that behaves like apps/worker/src/worker.ts: it registers with and long-polls
 * every scheduler node, runs jobs in its slots, renews due leases every renewIntervalMs
 * through the node that delivered them, aborts a job and writes nothing once a renewal
 * is refused (or once its own clock says the lease ran out with no renewal answered),
 * writes results with the fence, and hands back any job beyond its free slots.
 *
 * Two loops of the real worker are event-driven here rather than sampled, so ten
 * thousand simulated workers do not cost ten thousand timers a second: a worker with no
 * free slot waits for one to free up (the real one re-checks every 50 ms; the wait here
 * ends on the same 50 ms grid), and the renewal check (every second in the real worker)
 * wakes on the first one-second tick at which some lease is due.
 */
export class SimWorker {
  private readonly running = new Map<string, Running>();
  private stopping = false;
  private renewIntervalMs = 30_000;
  private leaseTtlMs = 90_000;
  private readonly startedAtMs: number;
  private renewWake: { atMs: number; cancel: () => void } | null = null;
  private slotWaiters: (() => void)[] = [];

  constructor(private readonly o: SimWorkerOptions) {
    this.startedAtMs = o.process.clock.nowMs();
  }

  get id(): string {
    return this.o.id;
  }

  get free(): number {
    return Math.max(0, this.o.slots - this.running.size);
  }

  get busy(): number {
    return this.running.size;
  }

  runningJobs(): Assignment[] {
    return [...this.running.values()].map((r) => r.job);
  }

  async start(): Promise<void> {
    await Promise.all(this.o.hosts.map((_, i) => this.registerWith(i)));
    this.o.hosts.forEach((_, i) => void this.pollLoop(i));
  }

  /** Stops taking work (the process is about to be dropped). */
  stop(): void {
    this.stopping = true;
  }

  // ---- the wire ----------------------------------------------------------------------------

  /** One request to node `i`, answered by whatever SchedulerNode runs there when it arrives. */
  private call<T>(i: number, op: string, fn: (node: SchedulerNode) => Promise<T>, timeoutMs = this.o.rpcTimeoutMs): Promise<T> {
    const host = this.o.hosts[i]!;
    return callOver(this.o.links[i]!, this.o.process, host.process, `${this.o.id}>${host.nodeId}.${op}`, timeoutMs, async () => {
      const node = host.node;
      if (!node) throw new Error(`${host.nodeId} is starting`);
      try {
        return await fn(node);
      } catch (err) {
        // Typed refusals cross the wire as {code, message, details}, as the tRPC client rebuilds them.
        if (err instanceof FencelineError) throw errorFromJSON(err.toJSON());
        throw err;
      }
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.o.process.timers.after(ms, resolve));
  }

  private async registerWith(i: number): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        const info = await this.call(i, 'register', (node) => node.register(this.o.id, this.o.slots, {}));
        this.renewIntervalMs = info.renewIntervalMs;
        this.leaseTtlMs = info.leaseTtlMs;
        return;
      } catch (err) {
        if (err instanceof FencelineError) throw err;
        await this.sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  private async pollLoop(i: number): Promise<void> {
    let failures = 0;
    while (!this.stopping) {
      if (this.free === 0) {
        await this.slotFreed();
        continue;
      }
      try {
        const jobs = await this.call(i, 'poll', (node) => node.poll(this.o.id, this.o.slots, this.free, this.o.pollWaitMs), this.o.pollWaitMs + this.o.rpcTimeoutMs);
        failures = 0;
        for (const job of jobs) this.accept(job, i);
      } catch {
        if (this.stopping) break;
        failures++;
        await this.sleep(Math.min(2000, 100 * 2 ** Math.min(failures, 5)));
        await this.registerWith(i).catch(() => undefined);
      }
    }
  }

  /** Resolves when a slot is free, on the 50 ms grid the real worker re-checks on. */
  private slotFreed(): Promise<void> {
    const since = this.o.process.clock.nowMs();
    return new Promise((resolve) => {
      this.slotWaiters.push(() => {
        const waited = this.o.process.clock.nowMs() - since;
        const grid = Math.max(50, Math.ceil(waited / 50) * 50);
        this.o.process.timers.after(grid - waited, resolve);
      });
    });
  }

  private wakeSlotWaiters(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const w of waiters) w();
  }

  // ---- jobs ------------------------------------------------------------------------------------

  private accept(job: Assignment, via: number): void {
    this.renewIntervalMs = job.renewIntervalMs;
    this.leaseTtlMs = job.leaseTtlMs;
    if (this.running.size >= this.o.slots || this.stopping) {
      // Two nodes may both fill our free slots at the same instant; hand the excess back.
      this.call(via, 'release', (node) => node.release(this.o.id, { jobId: job.jobId, fence: job.fence })).then(
        () => this.o.stats.handedBack++,
        (err: unknown) => this.refused(err, 'release', job),
      );
      return;
    }
    const outcome = this.o.outcome(job, this.o.rng);
    const r: Running = { job, via, lost: false, lastRenewedMs: this.o.process.clock.nowMs(), cancelRun: () => undefined, abort: () => undefined };
    this.running.set(job.jobId, r);
    this.o.stats.started++;
    this.scheduleRenewCheck();
    void this.execute(r, outcome);
  }

  private async execute(r: Running, outcome: JobOutcome): Promise<void> {
    const { job } = r;
    const timeoutMs = job.task.timeoutMs;
    const timedOut = timeoutMs > 0 && outcome.durationMs > timeoutMs;
    let failure: { error: string; retryable: boolean } | null = null;
    try {
      await new Promise<void>((resolve, reject) => {
        r.cancelRun = this.o.process.timers.after(timedOut ? timeoutMs : outcome.durationMs, resolve);
        r.abort = (why) => {
          r.cancelRun();
          reject(new Error(why));
        };
      });
      if (timedOut) failure = { error: `timed out after ${timeoutMs} ms`, retryable: true };
      else if (outcome.fail) failure = { error: 'the job failed (simulated)', retryable: true };
    } catch (err) {
      failure = { error: err instanceof Error ? err.message : String(err), retryable: true };
    }
    // A job whose lease is lost writes nothing: another worker may hold it now.
    if (r.lost) {
      this.finish(job.jobId);
      return;
    }
    try {
      if (failure) {
        const f = failure;
        await this.write(r, (node) => node.fail(this.o.id, { jobId: job.jobId, fence: job.fence, error: f.error, retryable: f.retryable, logs: null }));
        this.o.stats.failed++;
      } else {
        await this.write(r, (node) => node.complete(this.o.id, { jobId: job.jobId, fence: job.fence, output: { sleptMs: outcome.durationMs }, logs: null }));
        this.o.stats.succeeded++;
      }
    } catch (err) {
      this.refused(err, failure ? 'fail' : 'complete', job);
    } finally {
      this.finish(job.jobId);
    }
  }

  private finish(jobId: string): void {
    if (!this.running.delete(jobId)) return;
    this.wakeSlotWaiters();
  }

  private refused(err: unknown, op: string, job: Assignment): void {
    if (err instanceof FencelineError) {
      this.o.stats.refusedWrites++;
      this.o.onRefused?.(err.code, op, job);
    }
  }

  /** Sends a write to the delivering node, falling back to the others if it cannot be reached. */
  private async write<T>(r: Running, fn: (node: SchedulerNode) => Promise<T>): Promise<T> {
    let last: unknown;
    for (let k = 0; k < this.o.hosts.length; k++) {
      const i = (r.via + k) % this.o.hosts.length;
      try {
        return await this.call(i, 'write', fn);
      } catch (err) {
        if (err instanceof FencelineError) throw err;
        last = err;
      }
    }
    throw last;
  }

  // ---- renewals --------------------------------------------------------------------------------

  /** Wakes on the first one-second tick (since start) at which some lease is due for renewal. */
  private scheduleRenewCheck(): void {
    let due = Number.POSITIVE_INFINITY;
    for (const r of this.running.values()) if (!r.lost) due = Math.min(due, r.lastRenewedMs + this.renewIntervalMs);
    if (!Number.isFinite(due)) return;
    const tick = Math.min(this.renewIntervalMs, 1000);
    const atMs = this.startedAtMs + Math.ceil((due - this.startedAtMs) / tick) * tick;
    if (this.renewWake && this.renewWake.atMs <= atMs) return;
    this.renewWake?.cancel();
    const now = this.o.process.clock.nowMs();
    const cancel = this.o.process.timers.after(Math.max(0, atMs - now), () => {
      this.renewWake = null;
      void this.renewAll().finally(() => this.scheduleRenewCheck());
    });
    this.renewWake = { atMs, cancel };
  }

  private async renewAll(): Promise<void> {
    const now = this.o.process.clock.nowMs();
    const due = [...this.running.values()].filter((r) => !r.lost && now - r.lastRenewedMs >= this.renewIntervalMs);
    if (due.length === 0) return;
    const byNode = new Map<number, Running[]>();
    for (const r of due) byNode.set(r.via, [...(byNode.get(r.via) ?? []), r]);
    await Promise.all([...byNode.values()].map((group) => this.renewGroup(group)));
  }

  private async renewGroup(group: Running[]): Promise<RenewOutcome[]> {
    try {
      const leases = group.map((r) => ({ jobId: r.job.jobId, fence: r.job.fence }));
      const outcomes = await this.write(group[0]!, (node) => node.renew(this.o.id, leases));
      const at = this.o.process.clock.nowMs();
      for (const o of outcomes) {
        const r = this.running.get(o.jobId);
        if (!r) continue;
        if (o.ok) r.lastRenewedMs = at;
        else {
          this.o.onRefused?.(o.code, 'renew', r.job);
          this.lose(r);
        }
      }
      return outcomes;
    } catch {
      // No node answered. Once the lease has run out by our own clock it cannot be renewed
      // any more, so stop the work; the store would refuse its result anyway.
      const now = this.o.process.clock.nowMs();
      for (const r of group) if (now - r.lastRenewedMs >= this.leaseTtlMs) this.lose(r);
      return [];
    }
  }

  private lose(r: Running): void {
    if (r.lost) return;
    r.lost = true;
    this.o.stats.lost++;
    r.abort('lease lost');
  }
}
