import { FencelineError, errorFromJSON, type Assignment, type RenewOutcome, type SchedulerNode } from '@fenceline/core';
import type { SimProcess } from '../engine/process';
import type { Rng } from '../engine/random';
import { callLabels, callOver, holdOver, type CallLabels, type HeldCall, type Link } from './link';
import type { SchedulerHost } from './scheduler-host';

/**
 * How long a node holds a simulated worker's poll before answering it empty. The workers'
 * polls are held open until answered (see `holdOver` in link.ts), so the nodes of a
 * simulation are configured with this wait instead of the production 25 s; the worker
 * still behaves as if its polls were answered every `pollWaitMs`.
 */
export const HELD_POLL_WAIT_MS = 6 * 60 * 60 * 1000;

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
  /** The production long-poll wait, after which a node answers an idle poll empty and the worker polls again. */
  pollWaitMs: number;
  rpcTimeoutMs: number;
  outcome: (job: Assignment, rng: Rng) => JobOutcome;
  stats: WorkerStats;
  /** Told of every refused write the worker attempted (its fence was stale, forged or lost). */
  onRefused?: (code: string, op: string, job: Assignment) => void;
  /**
   * The host's renewal agent, when this identity shares a host with others
   * (`workers.identitiesPerHost`): the agent renews every identity's due leases in one
   * renewMany per node, and this worker only tells it when its next lease falls due.
   */
  renewalAgent?: RenewalAgentLink;
}

/** What a worker tells its host's renewal agent (renewal-agent.ts). */
export interface RenewalAgentLink {
  /** The next lease of `worker` is due for renewal at `dueMs` of true time. */
  dueAt(worker: SimWorker, dueMs: number): void;
}

/** A lease due for renewal, as the worker hands it to whoever sends the renewal. */
export interface DueLease {
  readonly jobId: string;
  readonly fence: number;
  /** The node that delivered the job; the renewal goes there first. */
  readonly via: number;
}

export interface WorkerStats {
  started: number;
  succeeded: number;
  failed: number;
  lost: number;
  refusedWrites: number;
  handedBack: number;
}

interface Running extends DueLease {
  job: Assignment;
  via: number;
  lost: boolean;
  /** Its result is being written; renewing it now would only race the write. */
  finishing: boolean;
  /** Handed to the host's renewal agent, whose answer has not come back yet. */
  renewing: boolean;
  lastRenewedMs: number;
  cancelRun: () => void;
  abort: (why: string) => void;
}

interface OpenPoll {
  call: HeldCall<Assignment[]>;
  /** The free slots this poll offered. */
  free: number;
}

interface QueuedResult {
  r: Running;
  output: unknown;
  resolve: () => void;
  reject: (err: unknown) => void;
}

/** Results per completeMany call, as apps/worker/src/results.ts sends them. */
const MAX_RESULTS = 500;

/**
 * A worker that behaves like apps/worker/src/worker.ts: one loop per scheduler node, each
 * registering before it polls (a node that is down does not hold up the others); it runs
 * jobs in its slots, renews due leases through the node that delivered them, aborts a job
 * and writes nothing once a renewal is refused (or once its own clock says the lease ran
 * out with no renewal answered), writes results with the fence (successes in batches per
 * node, one request in flight at a time), and hands back any job beyond its free slots.
 * When a delivery takes free slots, its polls on the other nodes stay open with the old
 * count until their next 25 s answer (cutting one could lose an answer on the wire).
 *
 * What is event-driven here rather than sampled, so ten thousand simulated workers cost
 * events only when something happens:
 *
 * - polls are held open until answered (link.ts `holdOver`): the 25 s cycle of empty
 *   answers and re-polls is played out only when it would change something (a cut, a
 *   pause, a crash, a freed slot);
 * - a poll loop with no free slot waits for a slot to free (the real worker also wakes at
 *   once; its one-second fallback wake only matters while it shuts down);
 * - the renewal check (every second in the real worker) wakes on the first one-second
 *   tick at which some lease is due, and not at all while the worker holds no lease.
 */
export class SimWorker {
  private readonly running = new Map<string, Running>();
  private readonly polls = new Map<number, OpenPoll>();
  private stopping = false;
  private renewIntervalMs = 30_000;
  private leaseTtlMs = 90_000;
  private readonly startedAtMs: number;
  private renewWake: { atMs: number; cancel: () => void } | null = null;
  private slotWaiters: (() => void)[] = [];
  /** Jobs whose result is being written. */
  private finishing = 0;
  private readonly resultQueues: QueuedResult[][];
  private readonly resultsBusy: boolean[];
  /** Call names per node (`w-1>node-0.poll`), built once: they label every event of a call. */
  private readonly labels: { register: CallLabels; poll: CallLabels; write: CallLabels; complete: CallLabels; release: CallLabels }[];

  constructor(private readonly o: SimWorkerOptions) {
    this.startedAtMs = o.process.clock.nowMs();
    this.resultQueues = o.hosts.map(() => []);
    this.resultsBusy = o.hosts.map(() => false);
    this.labels = o.hosts.map((h) => {
      const base = `${o.id}>${h.nodeId}`;
      return { register: callLabels(`${base}.register`), poll: callLabels(`${base}.poll`), write: callLabels(`${base}.write`), complete: callLabels(`${base}.complete`), release: callLabels(`${base}.release`) };
    });
  }

  get id(): string {
    return this.o.id;
  }

  get process(): SimProcess {
    return this.o.process;
  }

  /** Stopped taking work: the process it ran in crashed or is being dropped. */
  get stopped(): boolean {
    return this.stopping;
  }

  /**
   * Slots not taken by a job at work. As in apps/worker, a job whose result is being
   * written no longer counts: the node that takes the result credits the slot to our open
   * poll, so new work may arrive before the write's answer does.
   */
  get free(): number {
    return Math.max(0, this.o.slots - (this.running.size - this.finishing));
  }

  get busy(): number {
    return this.running.size;
  }

  runningJobs(): Assignment[] {
    return [...this.running.values()].map((r) => r.job);
  }

  /** Starts one loop per node; resolves once any node has accepted the registration. */
  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      let refused = 0;
      this.o.hosts.forEach((_, i) => {
        void this.pollLoop(i, resolve).catch((err: unknown) => {
          if (++refused === this.o.hosts.length) reject(err);
        });
      });
    });
  }

  /** Stops taking work (the process is about to be dropped). */
  stop(): void {
    this.stopping = true;
  }

  // ---- the wire ----------------------------------------------------------------------------

  /** One request to node `i`, answered by whatever SchedulerNode runs there when it arrives. */
  private call<T>(i: number, labels: CallLabels, fn: (node: SchedulerNode) => Promise<T>): Promise<T> {
    const host = this.o.hosts[i]!;
    return callOver(this.o.links[i]!, this.o.process, host.process, labels, this.o.rpcTimeoutMs, () => onNode(host, fn));
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => this.o.process.timers.after(ms, resolve));
  }

  private async registerWith(i: number): Promise<void> {
    for (let attempt = 0; !this.stopping; attempt++) {
      try {
        const info = await this.call(i, this.labels[i]!.register, (node) => node.register(this.o.id, this.o.slots, {}));
        this.renewIntervalMs = info.renewIntervalMs;
        this.leaseTtlMs = info.leaseTtlMs;
        return;
      } catch (err) {
        if (err instanceof FencelineError) throw err;
        await this.sleep(Math.min(2000, 100 * 2 ** Math.min(attempt, 5)));
      }
    }
  }

  /** One long poll at a time per node; answered the moment a lease is granted to us. */
  private async pollLoop(i: number, onRegistered: () => void): Promise<void> {
    await this.registerWith(i);
    onRegistered();
    const host = this.o.hosts[i]!;
    let failures = 0;
    while (!this.stopping) {
      if (this.free === 0) {
        await this.slotFreed();
        continue;
      }
      const free = this.free;
      const call = holdOver(this.o.links[i]!, this.o.process, host.process, this.labels[i]!.poll, { cycleMs: this.o.pollWaitMs, timeoutMs: this.o.rpcTimeoutMs }, (hangUp) =>
        onNode(host, (node) => node.poll(this.o.id, this.o.slots, free, HELD_POLL_WAIT_MS, hangUp)),
      );
      const open: OpenPoll = { call, free };
      this.polls.set(i, open);
      try {
        const jobs = await call.promise;
        failures = 0;
        for (const job of jobs) this.accept(job, i);
        // Our polls on the other nodes still offer the slots these jobs just took and are
        // left open, as apps/worker leaves them (cutting one could lose an answer on the
        // wire); each keeps the old count until its next 25 s answer, which here is played
        // out, and a node that fills slots we no longer have gets the excess handed back.
        if (jobs.length > 0) {
          for (const [k, other] of this.polls) if (k !== i && other.free > this.free) other.call.refresh();
        }
      } catch (err) {
        if (this.stopping) break;
        failures++;
        await this.sleep(Math.min(2000, 100 * 2 ** Math.min(failures, 5)));
        // A restarted node forgets us; registering again is idempotent.
        await this.registerWith(i).catch(() => undefined);
      } finally {
        if (this.polls.get(i) === open) this.polls.delete(i);
      }
    }
  }

  /** Resolves as soon as a job leaves its slot. */
  private slotFreed(): Promise<void> {
    return new Promise((resolve) => this.slotWaiters.push(resolve));
  }

  /**
   * A job left its slot: loops waiting for one poll again, and a poll still open with
   * another free count is answered at its next cycle, where the real worker would poll
   * again with the new count anyway.
   */
  private leaveSlot(jobId: string): void {
    if (this.running.delete(jobId)) this.wakePollers();
  }

  private wakePollers(): void {
    const waiters = this.slotWaiters;
    this.slotWaiters = [];
    for (const wake of waiters) wake();
    const free = this.free;
    for (const p of this.polls.values()) if (p.free !== free) p.call.refresh();
  }

  // ---- jobs ------------------------------------------------------------------------------------

  private accept(job: Assignment, via: number): void {
    this.renewIntervalMs = job.renewIntervalMs;
    this.leaseTtlMs = job.leaseTtlMs;
    if (this.free === 0 || this.stopping) {
      // Two nodes may both fill our free slots at the same instant; hand the excess back.
      this.call(via, this.labels[via]!.release, (node) => node.release(this.o.id, { jobId: job.jobId, fence: job.fence })).then(
        () => this.o.stats.handedBack++,
        (err: unknown) => this.refused(err, 'release', job),
      );
      return;
    }
    const outcome = this.o.outcome(job, this.o.rng);
    const r: Running = { jobId: job.jobId, fence: job.fence, job, via, lost: false, finishing: false, renewing: false, lastRenewedMs: this.o.process.clock.nowMs(), cancelRun: () => undefined, abort: () => undefined };
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
      this.leaveSlot(job.jobId);
      return;
    }
    r.finishing = true;
    this.finishing++;
    this.wakePollers();
    try {
      if (failure) {
        const f = failure;
        await this.write(r, (node) => node.fail(this.o.id, { jobId: job.jobId, fence: job.fence, error: f.error, retryable: f.retryable, logs: null }));
        this.o.stats.failed++;
      } else {
        await this.sendResult(r, { sleptMs: outcome.durationMs });
        this.o.stats.succeeded++;
      }
    } catch (err) {
      this.refused(err, failure ? 'fail' : 'complete', job);
    } finally {
      this.finishing--;
      this.leaveSlot(job.jobId);
    }
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
        return await this.call(i, this.labels[i]!.write, fn);
      } catch (err) {
        if (err instanceof FencelineError) throw err;
        last = err;
      }
    }
    throw last;
  }

  // ---- results (apps/worker/src/results.ts) ------------------------------------------------------

  /** Queues a successful result for the delivering node; one completeMany per node is in flight at a time. */
  private sendResult(r: Running, output: unknown): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.resultQueues[r.via]!.push({ r, output, resolve, reject });
      if (this.resultsBusy[r.via]) return;
      this.resultsBusy[r.via] = true;
      // Results that finish at the same instant share the first request, as with setImmediate.
      void Promise.resolve().then(() => this.drainResults(r.via));
    });
  }

  private async drainResults(via: number): Promise<void> {
    const queue = this.resultQueues[via]!;
    while (queue.length > 0) await this.deliverResults(via, queue.splice(0, MAX_RESULTS));
    this.resultsBusy[via] = false;
  }

  /** Tries the delivering node first and then the others, as long as none answers. */
  private async deliverResults(via: number, batch: QueuedResult[]): Promise<void> {
    const items = batch.map((q) => ({ jobId: q.r.job.jobId, fence: q.r.job.fence, output: q.output, logs: null }));
    let last: unknown = new Error('no scheduler node to send results to');
    for (let k = 0; k < this.o.hosts.length; k++) {
      const i = (via + k) % this.o.hosts.length;
      try {
        const outcomes = await this.call(i, this.labels[i]!.complete, async (node) => {
          // Each refusal crosses the wire as {code, message, details}, as the router sends it.
          const answers = await node.completeMany(this.o.id, items);
          return answers.map((a) => (a.ok ? { ok: true as const } : { ok: false as const, error: a.error.toJSON() }));
        });
        batch.forEach((q, n) => {
          const a = outcomes[n];
          if (a?.ok) q.resolve();
          else q.reject(a ? errorFromJSON(a.error) : new Error(`no outcome for job ${q.r.job.jobId}`));
        });
        return;
      } catch (err) {
        // A refusal of the whole call is the same on every node.
        if (err instanceof FencelineError) {
          for (const q of batch) q.reject(err);
          return;
        }
        last = err;
      }
    }
    for (const q of batch) q.reject(last);
  }

  // ---- renewals --------------------------------------------------------------------------------

  /**
   * Wakes on the first one-second tick (since start) at which some lease is due for
   * renewal; with a renewal agent, tells the agent when that is instead.
   */
  scheduleRenewCheck(): void {
    let due = Number.POSITIVE_INFINITY;
    for (const r of this.running.values()) if (!r.lost && !r.finishing && !r.renewing) due = Math.min(due, r.lastRenewedMs + this.renewIntervalMs);
    if (!Number.isFinite(due)) return;
    const now = this.o.process.clock.nowMs();
    if (this.o.renewalAgent) {
      // Our clock may drift or have been stepped; the agent keeps true time.
      this.o.renewalAgent.dueAt(this, this.o.process.sim.nowMs + Math.max(0, due - now));
      return;
    }
    const tick = Math.min(this.renewIntervalMs, 1000);
    const atMs = this.startedAtMs + Math.ceil((due - this.startedAtMs) / tick) * tick;
    if (this.renewWake && this.renewWake.atMs <= atMs) return;
    this.renewWake?.cancel();
    const cancel = this.o.process.timers.after(Math.max(0, atMs - now), () => {
      this.renewWake = null;
      void this.renewAll().finally(() => this.scheduleRenewCheck());
    });
    this.renewWake = { atMs, cancel };
  }

  /** The leases due for renewal now, by this process's clock (apps/worker's rule). */
  private dueLeases(): Running[] {
    const now = this.o.process.clock.nowMs();
    const due: Running[] = [];
    for (const r of this.running.values()) if (!r.lost && !r.finishing && !r.renewing && now - r.lastRenewedMs >= this.renewIntervalMs) due.push(r);
    return due;
  }

  /**
   * The leases due now, handed to the host's renewal agent: they are not handed out again
   * until its answer comes back, as our own renewal loop waits for its answer before the
   * next check.
   */
  takeDueLeases(): DueLease[] {
    const due = this.dueLeases();
    for (const r of due) r.renewing = true;
    return due;
  }

  private async renewAll(): Promise<void> {
    const due = this.dueLeases();
    if (due.length === 0) return;
    const byNode = new Map<number, Running[]>();
    for (const r of due) byNode.set(r.via, [...(byNode.get(r.via) ?? []), r]);
    await Promise.all([...byNode.values()].map((group) => this.renewGroup(group)));
  }

  private async renewGroup(group: Running[]): Promise<void> {
    try {
      const leases = group.map((r) => ({ jobId: r.job.jobId, fence: r.job.fence }));
      this.renewed(await this.write(group[0]!, (node) => node.renew(this.o.id, leases)));
    } catch {
      this.notRenewed(group);
    }
  }

  /** The answers to a renewal of our leases: a refused one is lost, and its job stops at once. */
  renewed(outcomes: RenewOutcome[]): void {
    const at = this.o.process.clock.nowMs();
    for (const o of outcomes) {
      const r = this.running.get(o.jobId);
      if (!r) continue;
      r.renewing = false;
      if (o.ok) r.lastRenewedMs = at;
      else {
        this.o.onRefused?.(o.code, 'renew', r.job);
        this.lose(r);
      }
    }
  }

  /**
   * No node answered a renewal. Once a lease has run out by our own clock it cannot be
   * renewed any more, so stop the work; the store would refuse its result anyway.
   */
  notRenewed(leases: readonly DueLease[]): void {
    const now = this.o.process.clock.nowMs();
    // The leases handed out by dueLeases are our own records of the jobs.
    for (const r of leases as readonly Running[]) {
      r.renewing = false;
      if (now - r.lastRenewedMs >= this.leaseTtlMs) this.lose(r);
    }
  }

  private lose(r: Running): void {
    if (r.lost) return;
    r.lost = true;
    this.o.stats.lost++;
    r.abort('lease lost');
  }
}

/** Runs `fn` on the node that runs on `host` when the request arrives; typed refusals cross the wire as the tRPC client rebuilds them. */
export async function onNode<T>(host: SchedulerHost, fn: (node: SchedulerNode) => Promise<T>): Promise<T> {
  const node = host.node;
  if (!node) throw new Error(`${host.nodeId} is starting`);
  try {
    return await fn(node);
  } catch (err) {
    if (err instanceof FencelineError) throw errorFromJSON(err.toJSON());
    throw err;
  }
}
