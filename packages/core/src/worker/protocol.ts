import type { FencelineError } from '../errors';
import type { EffectRecord } from '../input/effect-reports';
import type { JobId, WorkerId } from '../ids';
import type { Assignment, PollItem } from '../engine/worker-pool';
import type { ReleaseCause } from '../engine/revocation';
import type { RenewOutcome, UpstreamOutput } from '../store';
import type { WorkerOffer } from '../routing/offer';

/**
 * What the worker core needs from the wire: the scheduler's worker protocol, one call per
 * node. apps/worker binds it to HTTP (tRPC), the simulator to its simulated links. A call
 * rejects with a FencelineError when the node answered with a typed refusal (the same on
 * every node, so it is not retried elsewhere), and with anything else when no answer came.
 */
export interface WorkerTransport {
  /** The scheduler nodes, numbered 0..nodeCount-1; a job's writes go first to the node that delivered it. */
  readonly nodeCount: number;
  /** `offer` says what the worker can run; a node routes to it only jobs the offer covers. */
  register(node: number, req: { workerId: WorkerId; slots: number; offer?: WorkerOffer }): Promise<LeaseTiming>;
  /** A long poll, open until the node hands this worker jobs or answers empty after `waitMs`. */
  poll(node: number, req: { workerId: WorkerId; slots: number; free: number; waitMs: number; offer?: WorkerOffer }): OpenPoll;
  /** Renews leases; a lease's `log` is the job's lines since its last renewal, appended to its streamed log if the renewal lands. */
  renew(node: number, req: { workerId: WorkerId; leases: { jobId: JobId; fence: number; log?: string }[] }): Promise<RenewOutcome[]>;
  /** Many successful results in one call, each fenced and answered on its own, in order. */
  completeMany(node: number, req: { workerId: WorkerId; results: ResultToSend[] }): Promise<ResultOutcome[]>;
  /** Many failed attempts in one call, each fenced and answered on its own, in order. */
  failMany(node: number, req: { workerId: WorkerId; failures: FailureToSend[] }): Promise<ResultOutcome[]>;
  /** Many leases handed back unfinished in one call, each fenced and answered on its own, in order. */
  releaseMany(node: number, req: { workerId: WorkerId; releases: ReleaseToSend[] }): Promise<ResultOutcome[]>;
  /** The accepted outputs of the job's upstream tasks: a fenced read, refused like a write when the fence is no longer current. */
  upstream(node: number, req: { workerId: WorkerId; jobId: JobId; fence: number; taskIds: string[] }): Promise<UpstreamOutput[]>;
}

/** How long a lease lasts and how often it is renewed, as the nodes say when they answer. */
export interface LeaseTiming {
  leaseTtlMs: number;
  renewIntervalMs: number;
}

/** A poll on its way or held open by a node. */
export interface OpenPoll {
  readonly answer: Promise<PollItem[]>;
  /** The worker hangs up: `answer` rejects, and the node stops holding the poll. */
  hangUp(reason: Error): void;
  /**
   * The worker's free slots changed since the poll was sent. A node answers an open poll
   * empty after its wait and the worker polls again with the new count; a transport whose
   * polls are held longer than that (the simulator's) plays that answer out here.
   */
  offerChanged?(free: number): void;
}

export interface ResultToSend {
  jobId: JobId;
  fence: number;
  output: unknown;
  logs: string | null;
  /** The effect outcomes the attempt reported; left out when it reported none, so a plain result costs nothing more. */
  effects?: EffectRecord[];
}

/** A failed attempt; `effects` rides with it when the attempt reported any, and is left out otherwise. */
export interface FailureToSend {
  jobId: JobId;
  fence: number;
  error: string;
  retryable: boolean;
  logs: string | null;
  effects?: EffectRecord[];
}

/** A lease handed back unfinished, and why. */
export interface ReleaseToSend {
  jobId: JobId;
  fence: number;
  reason: ReleaseCause;
}

export type ResultOutcome = { ok: true } | { ok: false; error: FencelineError };

/** What runs a job's handler: the process's handlers in production, a timer in the simulator. */
export interface JobExecutor {
  /** Runs the job to its end; it should stop soon after `control.signal` is aborted. */
  run(job: Assignment, control: JobControl): Promise<JobEnd>;
}

export interface JobControl {
  /** Aborted when the lease is lost, the job times out, or the worker hands the job back on stop. */
  readonly signal: AbortSignal;
  /** Asks the scheduler whether the job's fence is still current; rejects with LeaseLostError if not. */
  checkFence(): Promise<void>;
  /** Streams one log line: the next renewal of the lease carries it (bounded, see LogStream). */
  log(line: string): void;
  /**
   * The accepted outputs of the job's upstream tasks (its assignment's `task.dependsOn`), by
   * task id, read with the job's fence; {} without asking for a job with no dependencies.
   */
  upstream(): Promise<Record<string, { output: unknown }>>;
  /**
   * The W3C trace context the job's own calls out carry (an HTTP task's traceparent
   * header): the worker's span of the job when it traces, else the attempt's span the
   * node sent with the lease; absent when neither traces.
   */
  readonly traceparent?: string;
}

/**
 * How a handler ended; a failure says whether another attempt could succeed. `effects` are
 * the outcomes of the job's fenced effects as the handler reported them (TaskContext's
 * reportEffect), sent with the result in the same request.
 */
export type JobEnd =
  { ok: true; output: unknown; logs: string | null; effects?: EffectRecord[] } | { ok: false; error: unknown; retryable: boolean; logs: string | null; effects?: EffectRecord[] };

export interface WorkerStats {
  started: number;
  succeeded: number;
  failed: number;
  lost: number;
  refusedWrites: number;
  handedBack: number;
}

export function emptyWorkerStats(): WorkerStats {
  return { started: 0, succeeded: 0, failed: 0, lost: 0, refusedWrites: 0, handedBack: 0 };
}

export type WorkerLog = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
