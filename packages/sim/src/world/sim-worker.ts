import { type WorkerId } from '@fenceline/core';
import { type Assignment } from '@fenceline/core/engine';
import { type RenewOutcome } from '@fenceline/core/store';
import { WorkerCore, type DueLease, type JobControl, type JobEnd, type WorkerStats } from '@fenceline/core/worker';
import type { SimProcess } from '../engine/process';
import type { Rng } from '../engine/random';
import type { Link } from './link';
import type { SchedulerHost } from './scheduler-host';
import { SimWorkerTransport } from './worker-transport';

export { HELD_POLL_WAIT_MS } from './worker-transport';
export type { DueLease, WorkerStats } from '@fenceline/core/worker';

/** How a job behaves when this worker runs it: how long it takes and whether it fails. */
export interface JobOutcome {
  durationMs: number;
  fail: boolean;
}

export interface SimWorkerOptions {
  id: WorkerId;
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
  /** Told of every refused write or renewal the worker attempted (its fence was stale, forged or lost). */
  onRefused?: (code: string, op: string, job: Assignment) => void;
  /**
   * The job makes its effect outside the scheduler (effect-sinks.ts) under its fence: when
   * it finishes its work, and also when it is aborted (`late`), as task code that learns of
   * its lost lease only after it wrote does, a paused worker waking up among them.
   */
  onEffect?: (job: Assignment, late: boolean) => void;
  /** Told when a node renewed leases of this worker but the answer was lost on the way back. */
  onRenewReplyLost?: (leases: { jobId: string; fence: number }[]) => void;
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

/**
 * A simulated worker: the production WorkerCore (@fenceline/core), which apps/worker also
 * runs, bound to the simulated links (worker-transport.ts), the process's virtual clock
 * and timers, and job outcomes drawn from the scenario (a job is a timer of its drawn
 * duration that ends in success or a simulated failure). Every decision (what to poll,
 * when to renew, when a lease is lost, how results are batched and retried, what is
 * handed back) is the core's. What is event-driven here rather than sampled, so ten
 * thousand simulated workers cost events only when something happens, is the transport's
 * held polls (link.ts `holdOver`); the core's renewal check already wakes only when some
 * lease is due.
 */
export class SimWorker {
  private readonly core: WorkerCore;
  /** This process's session key: a new incarnation of the identity is a new session. */
  readonly session: string;

  constructor(private readonly o: SimWorkerOptions) {
    const agent = o.renewalAgent;
    const process = o.process;
    this.session = `${o.id}@${process.incarnation}`;
    this.core = new WorkerCore({
      workerId: o.id,
      slots: o.slots,
      clock: process.clock,
      timers: process.timers,
      transport: new SimWorkerTransport({
        id: o.id,
        process,
        hosts: o.hosts,
        links: o.links,
        rpcTimeoutMs: o.rpcTimeoutMs,
        session: this.session,
        onRenewReplyLost: o.onRenewReplyLost,
      }),
      executor: { run: (job, control) => this.run(job, control) },
      pollWaitMs: o.pollWaitMs,
      // Our clock may drift or have been stepped; the agent keeps true time.
      renewalAgent: agent ? { dueAt: (localDueMs) => agent.dueAt(this, process.sim.nowMs + Math.max(0, localDueMs - process.clock.nowMs())) } : undefined,
      stats: o.stats,
      onRefused: o.onRefused,
    });
  }

  get id(): WorkerId {
    return this.o.id;
  }

  get process(): SimProcess {
    return this.o.process;
  }

  /** Stopped taking work: the process it ran in crashed or is being dropped. */
  get stopped(): boolean {
    return this.core.stopped;
  }

  get free(): number {
    return this.core.free;
  }

  get busy(): number {
    return this.core.busy;
  }

  runningJobs(): Assignment[] {
    return this.core.runningJobs();
  }

  /** Starts one loop per node; resolves once any node has accepted the registration. */
  start(): Promise<void> {
    return this.core.start();
  }

  /** The process died: the worker sends nothing more. */
  stop(): void {
    this.core.halt();
  }

  // ---- for the host's renewal agent --------------------------------------------------------

  takeDueLeases(): DueLease[] {
    return this.core.takeDueLeases();
  }

  renewed(outcomes: RenewOutcome[]): void {
    this.core.renewed(outcomes);
  }

  notRenewed(leases: readonly DueLease[]): void {
    this.core.notRenewed(leases);
  }

  scheduleRenewCheck(): void {
    this.core.scheduleRenewals();
  }

  /** A job as the scenario draws it: a timer of its duration, ended early if the core aborts it. */
  private run(job: Assignment, control: JobControl): Promise<JobEnd> {
    const outcome = this.o.outcome(job, this.o.rng);
    return new Promise<JobEnd>((resolve) => {
      let ended = false;
      const cancel = this.o.process.timers.after(outcome.durationMs, () => {
        ended = true;
        if (!outcome.fail) this.o.onEffect?.(job, false);
        resolve(
          outcome.fail
            ? { ok: false, error: new Error('the job failed (simulated)'), retryable: true, logs: null }
            : { ok: true, output: { sleptMs: outcome.durationMs }, logs: null },
        );
      });
      control.signal.addEventListener(
        'abort',
        () => {
          cancel();
          if (!ended && !outcome.fail) this.o.onEffect?.(job, true);
          resolve({ ok: false, error: control.signal.reason, retryable: true, logs: null });
        },
        { once: true },
      );
    });
  }
}
