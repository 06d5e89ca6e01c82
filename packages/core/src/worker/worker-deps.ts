import type { Clock, Timers } from '../clock';
import type { WorkerId } from '../ids';
import type { Assignment } from '../engine/worker-pool';
import type { WorkerOffer } from '../routing/offer';
import type { JobExecutor, WorkerLog, WorkerStats, WorkerTransport } from './protocol';
import type { RenewalAgent } from './renewals';
import type { BatchLimits } from './result-batch';
import type { Tracing } from '../tracing';

/** What a WorkerCore is given: who it is, its slots, and everything it must not make itself. */
export interface WorkerCoreDeps {
  workerId: WorkerId;
  slots: number;
  /** What it can run (pool, labels, job types), sent on register and on every poll; the default offer when absent. */
  offer?: WorkerOffer;
  clock: Clock;
  timers: Timers;
  transport: WorkerTransport;
  executor: JobExecutor;
  /** How long a poll may wait on a node before it is answered empty and sent again. */
  pollWaitMs: number;
  /** How long a graceful stop lets running jobs finish before handing them back. */
  shutdownGraceMs?: number;
  /** Renews this worker's leases instead of its own loop (a host of many identities). */
  renewalAgent?: RenewalAgent;
  /** Runs `fn` once the current turn is over; results that end together share a request. Default: a microtask. */
  defer?: (fn: () => void) => void;
  resultLimits?: BatchLimits;
  /** Counters, shared when several workers report as one (the simulator's fleet). */
  stats?: WorkerStats;
  log?: WorkerLog;
  /** Where the worker's spans of its jobs go; none when absent or not enabled. */
  tracing?: Tracing;
  /** Told of every refused write or renewal (its fence was stale, forged or lost). */
  onRefused?: (code: string, op: 'complete' | 'fail' | 'release' | 'renew', job: Assignment) => void;
}
