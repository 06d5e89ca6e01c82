import type { WorkerId } from '../ids';
import type { Clock, Timers } from '../clock';
import { FencelineError, LeaseLostError } from '../errors';
import type { RenewOutcome } from '../store';
import { viaThenOthers } from './node-order';
import type { LeaseTiming, WorkerLog, WorkerTransport } from './protocol';
import type { DueLease, RunningJob } from './running-job';

/** How often a worker looks for leases due for renewal, at most. */
export const RENEW_CHECK_MS = 1000;

/**
 * Someone who renews on this worker's behalf: a process that hosts many worker identities
 * renews all their due leases in one renewMany per node. It is told when the next lease
 * falls due (by this worker's clock), takes the due leases, and hands back the answers.
 */
export interface RenewalAgent {
  dueAt(localDueMs: number): void;
}

export interface RenewalsDeps {
  workerId: WorkerId;
  clock: Clock;
  timers: Timers;
  transport: WorkerTransport;
  running: ReadonlyMap<string, RunningJob>;
  agent?: RenewalAgent;
  /** The lease is lost: the job must be aborted and write nothing. */
  lose: (r: RunningJob, why: string) => void;
  onRefused?: (code: string, r: RunningJob) => void;
  log?: WorkerLog;
}

/**
 * When and how a worker renews its leases, and what each answer means. A due lease
 * (renewed longer ago than the renew interval, by the worker's own clock) is renewed
 * through the node that delivered it, falling back to the others, one call per node for
 * all that are due. A refused renewal loses the lease at once; a lease no node could
 * renew before it ran out by the worker's clock is lost too. A lease whose result is
 * being written is left alone: that write carries the fence and is accepted or refused
 * on its own, so an answer to a renewal sent before it changes nothing.
 *
 * The check runs on a one-second grid counted from the worker's start, but wakes only at
 * the first tick at which some lease is due, so a worker holding no lease has no timer.
 */
export class Renewals {
  timing: LeaseTiming = { renewIntervalMs: 30_000, leaseTtlMs: 90_000 };
  private readonly startedAtMs: number;
  private wake: { atMs: number; intervalMs: number; cancel: () => void } | null = null;
  private off = false;

  constructor(private readonly deps: RenewalsDeps) {
    this.startedAtMs = deps.clock.nowMs();
  }

  /** Stops renewing for good (the worker stopped or died). */
  stop(): void {
    this.off = true;
    this.wake?.cancel();
    this.wake = null;
  }

  /**
   * A lease was just taken. It falls due a full renew interval from now, after every lease
   * already held, so a check already armed under the same interval and no later than that
   * stands as it is: without this shortcut each accepted job scanned every running job, a
   * cost that grew with the slots a worker fills. An agent is told as before, since it
   * keeps only the earliest due it was last told of.
   */
  leaseTaken(r: RunningJob): void {
    const w = this.wake;
    if (!this.deps.agent && !this.off && w && w.intervalMs === this.timing.renewIntervalMs && w.atMs <= r.lastRenewedMs + w.intervalMs) return;
    this.schedule();
  }

  /** Arms the next check for the earliest lease due that is not being renewed (or tells the agent). */
  schedule(): void {
    if (this.off) return;
    let due = Number.POSITIVE_INFINITY;
    for (const r of this.deps.running.values()) if (this.renewable(r)) due = Math.min(due, r.lastRenewedMs + this.timing.renewIntervalMs);
    if (!Number.isFinite(due)) return;
    if (this.deps.agent) {
      this.deps.agent.dueAt(due);
      return;
    }
    const now = this.deps.clock.nowMs();
    const tick = Math.min(this.timing.renewIntervalMs, RENEW_CHECK_MS);
    // A lease already overdue (its last renewal got no answer) waits for the next tick, not
    // this instant: the check runs once a tick, whatever is overdue.
    const from = Math.max(due, now + 1);
    const atMs = this.startedAtMs + Math.ceil((from - this.startedAtMs) / tick) * tick;
    if (this.wake && this.wake.atMs <= atMs) return;
    this.wake?.cancel();
    const cancel = this.deps.timers.after(Math.max(0, atMs - now), () => {
      this.wake = null;
      void this.renewDue().finally(() => this.schedule());
    });
    this.wake = { atMs, intervalMs: this.timing.renewIntervalMs, cancel };
  }

  /** The leases due now, marked as being renewed until their answer comes back. */
  takeDue(): DueLease[] {
    const now = this.deps.clock.nowMs();
    const due: DueLease[] = [];
    for (const r of this.deps.running.values()) {
      if (!this.renewable(r) || now - r.lastRenewedMs < this.timing.renewIntervalMs) continue;
      r.renewing = true;
      due.push({ jobId: r.job.jobId, fence: r.job.fence, via: r.via });
    }
    return due;
  }

  /** The answers to a renewal: a refused lease is lost, unless its result is already being written. */
  renewed(outcomes: readonly RenewOutcome[]): void {
    const at = this.deps.clock.nowMs();
    for (const o of outcomes) {
      const r = this.deps.running.get(o.jobId);
      if (!r) continue;
      r.renewing = false;
      if (o.ok) r.lastRenewedMs = at;
      else {
        this.deps.onRefused?.(o.code, r);
        if (!r.finishing) this.deps.lose(r, `renewal refused: ${o.code}`);
      }
    }
  }

  /**
   * No node answered a renewal. Once a lease has run out by our own clock it cannot be
   * renewed any more, so its job stops; the store would refuse its result anyway.
   */
  notRenewed(leases: readonly DueLease[]): void {
    const now = this.deps.clock.nowMs();
    for (const lease of leases) {
      const r = this.deps.running.get(lease.jobId);
      if (!r || r.job.fence !== lease.fence) continue;
      r.renewing = false;
      if (!r.finishing && now - r.lastRenewedMs >= this.timing.leaseTtlMs) this.deps.lose(r, 'lease ran out before a renewal reached the scheduler');
    }
  }

  /** Renews one lease now, whether due or not, for a handler that checks its fence before a side effect. */
  async checkFence(r: RunningJob): Promise<void> {
    const [outcome] = await this.send(r.via, [r]);
    if (!outcome?.ok) throw new LeaseLostError(`lease of job ${r.job.jobId} is no longer held (fence ${r.job.fence})`, { jobId: r.job.jobId, fence: r.job.fence });
  }

  private renewable(r: RunningJob): boolean {
    return !r.lost && !r.finishing && !r.renewing;
  }

  private async renewDue(): Promise<void> {
    const byNode = new Map<number, RunningJob[]>();
    for (const lease of this.takeDue()) {
      const r = this.deps.running.get(lease.jobId)!;
      const group = byNode.get(lease.via);
      if (group) group.push(r);
      else byNode.set(lease.via, [r]);
    }
    await Promise.all([...byNode].map(([via, group]) => this.send(via, group)));
  }

  private async send(via: number, group: RunningJob[]): Promise<RenewOutcome[]> {
    // Each lease carries its job's log lines since the last renewal, if it has any.
    const leases = group.map((r) => {
      const log = r.logStream.take();
      return log === undefined ? { jobId: r.job.jobId, fence: r.job.fence } : { jobId: r.job.jobId, fence: r.job.fence, log };
    });
    try {
      const outcomes = await viaThenOthers(this.deps.transport.nodeCount, via, (node) => this.deps.transport.renew(node, { workerId: this.deps.workerId, leases }));
      this.renewed(outcomes);
      return outcomes;
    } catch (err) {
      if (!(err instanceof FencelineError)) this.deps.log?.('warn', 'renewal failed; will retry', { error: String(err) });
      this.notRenewed(group.map((r) => ({ jobId: r.job.jobId, fence: r.job.fence, via: r.via })));
      return [];
    }
  }
}
