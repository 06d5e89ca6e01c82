import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { StoreTime } from './shared';

/**
 * The event log: what happened, for the audits. Reading it back is for tests only
 * (EventReadStore in the testing entry).
 */
export interface EventStore extends StoreTime {
  /**
   * Appends events in order. With a `batchKey` the batch is kept once however often it is
   * sent with that key, so a writer that lost the answer can send it again.
   */
  appendEvents(events: NewEvent[], batchKey?: string): Promise<void>;
}

export interface NewEvent {
  type: string;
  /**
   * When it happened, by the emitter's estimate of the store's clock. Events are written in
   * batches, so a store that stamped them on arrival would date them up to a flush interval
   * late; it stamps its own time only on an event that comes without one.
   */
  at?: Date;
  shard?: number | null;
  dagId?: DagId | null;
  runId?: RunId | null;
  jobId?: JobId | null;
  workerId?: WorkerId | null;
  nodeId?: string | null;
  fence?: number | null;
  epoch?: number | null;
  data?: Record<string, unknown>;
}
