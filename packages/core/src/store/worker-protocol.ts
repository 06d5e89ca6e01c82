import type { ErrorCode, FencelineError } from '../errors';
import type { JobId, WorkerId } from '../ids';
import type { JobRow, WorkerRow } from '../model';
import type { EffectRecord } from '../input/effect-reports';
import type { StoreTime, LeaseRef } from './shared';

/**
 * What the worker protocol writes, through the node that serves it: a worker's
 * registration and presence, and its fenced writes on the leases it holds.
 */
export interface WorkerProtocolStore extends StoreTime {
  /**
   * Registers a worker under a session: `session` (the hash of the session secret)
   * becomes the worker's current one, so leases are granted to it and writes carrying an
   * earlier session of the same worker are refused from now on.
   */
  registerWorker(worker: { id: WorkerId; slots: number; nodeId: string | null; meta?: Record<string, unknown>; session: string; credentialId: string | null }): Promise<WorkerRow>;
  /** The worker's current session key, or null when it never registered. */
  workerSession(workerId: WorkerId): Promise<string | null>;
  /**
   * One statement for many workers: each one's last_seen becomes the time the node last
   * heard from it (the store's now() less its `silentMs`), and never goes back. A node
   * therefore vouches for nothing it has not heard: a worker killed at T reads last_seen T
   * on every node's heartbeat after, which is what the console's live window and the
   * `pool_no_worker` watch count from. With `skipSeenWithinMs`, a worker still polling
   * (silentMs 0) whose last_seen is already that recent is left as it is: every node
   * vouches for the workers polling it, and with 10,000 workers on 3 nodes rewriting every
   * row on every heartbeat was about 2,000 row writes a second to say what the store
   * already knew. A silent worker's row is written whenever it moves forward, so the time
   * a worker fell silent is recorded exactly, once.
   */
  heartbeatWorkers(beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs?: number): Promise<void>;
  /**
   * Renews many leases in one statement; each succeeds only if fence and holder match and
   * the lease is live. A renewal that carries log lines appends them to its attempt's
   * streamed log in the same statement, only when it is accepted, and only while the
   * attempt has streamed less than LIMITS.maxStreamedLogChars.
   */
  renewLeases(refs: RenewRef[], ttlMs: number): Promise<RenewOutcome[]>;
  /**
   * leased -> succeeded with a fenced write to the result store, atomically, for many
   * leases in one statement. Each item is fenced on its own: an accepted item is written
   * with its result, a refused one writes nothing and comes back with its typed refusal
   * (TooLarge included). Outcomes are in the order of `items`; a job named twice is
   * completed by its first item only.
   */
  completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]>;
  /**
   * Records a failed attempt: back to ready after the backoff when attempts remain and the
   * failure is retryable, else failed. The result store records it under the same fence.
   */
  failJob(ref: LeaseRef, failure: FailureWrite): Promise<JobRow>;
  /**
   * failJob for many attempts in one statement, each fenced on its own as in completeJobs:
   * an accepted item's row, or its typed refusal (nothing written for it). Outcomes are in
   * the order of `items`; a job named twice is failed by its first accepted item only.
   */
  failJobs(items: FailItem[]): Promise<WriteOutcome[]>;
  /** Hands a lease back unfinished (worker shutting down or over-committed): ready, fence + 1, attempt - 1. */
  releaseJob(ref: LeaseRef): Promise<JobRow>;
  /** releaseJob for many leases in one statement, each fenced and answered on its own, in order. */
  releaseJobs(refs: LeaseRef[]): Promise<WriteOutcome[]>;
  /**
   * The accepted outputs of the named tasks of the job's own run, for the holder of the
   * job's current lease: a fenced read, refused as a write would be (StaleFence,
   * ForgedFence, LeaseLost, NotFound) and reading nothing then. Only a task whose job
   * succeeded is listed, with the result the result store accepted at the job's fence; a
   * task that has not succeeded, or is not in the run, is left out. In the order of
   * `taskIds` (checkUpstreamTasks); TooLarge when the outputs together pass
   * LIMITS.maxUpstreamOutputBytes.
   */
  upstreamOutputs(ref: LeaseRef, taskIds: string[]): Promise<UpstreamOutput[]>;
}

/** One worker in a node's heartbeat: how long the node has not heard from it (0 while its poll is open there). */
export interface WorkerBeat {
  workerId: WorkerId;
  silentMs: number;
}

/**
 * A renewal, with the log lines its worker captured for the job since its last renewal
 * (at most LIMITS.maxLogChunkChars). The lines are appended to the attempt's streamed log
 * only if the renewal itself is accepted: a refused renewal writes nothing.
 */
export type RenewRef = LeaseRef & { log?: string };

export type RenewOutcome =
  | { jobId: JobId; ok: true; leaseExpiresAt: Date }
  | {
      jobId: JobId;
      ok: false;
      code: Extract<ErrorCode, 'STALE_FENCE' | 'FORGED_FENCE' | 'LEASE_LOST' | 'NOT_FOUND'>;
      message: string;
      /** Why a LEASE_LOST lease is lost (`details.cause` of the store's error); for the node's log only, never sent to a worker. */
      cause?: string;
    };

/** One worker write of a batch: the row it left, or the typed refusal (nothing written). */
export type WriteOutcome = { jobId: JobId; ok: true; row: JobRow } | { jobId: JobId; ok: false; error: FencelineError };

/** One successful result of a batch of completions. */
export interface CompleteItem {
  ref: LeaseRef;
  output?: unknown;
  logs?: string | null;
  /** The outcomes of the attempt's effects, kept with its attempt (null or absent: none reported). */
  effects?: EffectRecord[] | null;
}

/** A failed attempt as its worker writes it (WorkerProtocolStore.failJob). */
export interface FailureWrite {
  error: string;
  retryable: boolean;
  logs?: string | null;
  /** The outcomes of the attempt's effects, kept with its attempt (null or absent: none reported). */
  effects?: EffectRecord[] | null;
}

/** One failed attempt of a batch of failures (WorkerProtocolStore.failJobs). */
export interface FailItem extends FailureWrite {
  ref: LeaseRef;
}

/** An upstream task's accepted output, as the job downstream of it is handed it (WorkerProtocolStore.upstreamOutputs). */
export interface UpstreamOutput {
  taskId: string;
  jobId: JobId;
  /** The fence of the accepted result: the highest the result store holds, equal to the job's. */
  fence: number;
  output: unknown;
}
