import type { JobId } from '../ids';
import type { Assignment } from '../engine/worker-pool';
import type { TraceSpan } from '../tracing';
import type { LazyAbort } from './lazy-abort';
import type { LogStream } from './log-stream';

/** A job in one of the worker's slots, from its delivery until its result is answered. */
export interface RunningJob {
  readonly job: Assignment;
  /** The node that delivered the job; its writes and renewals go there first. */
  readonly via: number;
  /** Stops the job's handler (lease lost, timed out, shutting down). */
  readonly controller: LazyAbort;
  /** When this worker started it, by its own clock. */
  readonly startedMs: number;
  /** Set once the lease is known lost or handed back: the job must write nothing any more. */
  lost: boolean;
  /** Its result is being written; renewing it now would only race the write. */
  finishing: boolean;
  /** A renewal of it is on its way; it is not asked for again until that is answered. */
  renewing: boolean;
  lastRenewedMs: number;
  /** Its log lines not yet sent: the next renewal of its lease carries them. */
  readonly logStream: LogStream;
  /** This worker's span of the job, a child of the attempt's span on the node; null with tracing off. */
  readonly span: TraceSpan | null;
}

/** A lease due for renewal, as the worker hands it to whoever sends the renewal. */
export interface DueLease {
  readonly jobId: JobId;
  readonly fence: number;
  /** The node that delivered the job; the renewal goes there first. */
  readonly via: number;
}
