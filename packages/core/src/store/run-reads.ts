import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { JobRow, ResultRow, RunRow } from '../model';
import type { EffectRecord } from '../input/effect-reports';
import type { StoreTime } from './shared';

/** The reads of runs, jobs and results that the console, the CLI and the tools show. */
export interface RunReadStore extends StoreTime {
  getRun(runId: RunId): Promise<RunRow>;
  listRuns(query: ListRunsQuery): Promise<RunRow[]>;
  /**
   * A page of runs by keyset on (scheduled_at, id), filtered; the first page without a
   * cursor, the others by a `next` or `previous` cursor it gave out. A run is never shown
   * twice nor skipped across pages, whatever is inserted meanwhile. Throws InvalidInputError
   * naming the field for a cursor it did not give out (or gave out for the other order), a
   * limit out of range, an invalid instant or an unknown trigger.
   */
  pageRuns(query: RunPageQuery): Promise<RunPage>;
  listJobs(runId: RunId): Promise<JobRow[]>;
  getJob(jobId: JobId): Promise<JobRow>;
  getResult(jobId: JobId): Promise<ResultRow | null>;
  /** The accepted result of every job of the run that has one, in one read; [] for an unknown run. */
  listRunResults(runId: RunId): Promise<ResultRow[]>;
  /**
   * Every attempt of the job that wrote a result, oldest (lowest fence) first: the result
   * store keeps only the highest fence, this keeps each one. [] for a job with none.
   */
  listAttempts(jobId: JobId): Promise<AttemptRow[]>;
  /** The log lines a running attempt streamed with its renewals, in order; [] for none. */
  listLogChunks(query: LogChunksQuery): Promise<LogChunkRow[]>;
  /** Jobs currently leased, optionally to one worker. */
  listLeasedJobs(workerId?: WorkerId): Promise<JobRow[]>;
}

export interface ListRunsQuery {
  dagId?: DagId;
  state?: RunRow['state'];
  limit?: number;
  beforeId?: RunId;
}

/** Which runs come first in a page of runs: by (scheduled_at, id), newest or oldest first. */
export type RunOrder = 'newest' | 'oldest';

/** A page of runs (RunReadStore.pageRuns): every filter is optional and they combine with "and". */
export interface RunPageQuery {
  dagId?: DagId;
  state?: RunRow['state'];
  /** A run's trigger; any of RUN_TRIGGER_NAMES, including ones no run has yet. */
  trigger?: string;
  /** Runs scheduled at or after this instant. */
  scheduledFrom?: Date;
  /** Runs scheduled before this instant. */
  scheduledBefore?: Date;
  order?: RunOrder;
  /** 1 to RUN_PAGE_MAX_LIMIT, default RUN_PAGE_DEFAULT_LIMIT. */
  limit?: number;
  /** A `next` or `previous` of an earlier page with the same order; absent for the first page. */
  cursor?: string;
}

export interface RunPage {
  rows: RunRow[];
  /** The cursor of the page after this one, or null when this is the last. */
  next: string | null;
  /** The cursor of the page before this one, or null when this is the first. */
  previous: string | null;
}

/**
 * One attempt of a job that wrote a result (RunReadStore.listAttempts): what its worker
 * wrote under that attempt's fence. An attempt whose lease expired or was handed back wrote
 * nothing and has none.
 */
export interface AttemptRow {
  jobId: JobId;
  fence: number;
  /** The job's attempt number when the result was written (1 for the first). */
  attempt: number;
  workerId: WorkerId;
  outcome: 'succeeded' | 'failed';
  output: unknown;
  error: string | null;
  logs: string | null;
  /** The outcomes of the effects this attempt reported (@fenceline/effects), in the order reported; null when it reported none. */
  effects: EffectRecord[] | null;
  /** When this attempt's lease was granted (store time). */
  startedAt: Date | null;
  /** When its result was written (store time). */
  endedAt: Date;
}

/** Log lines of a running attempt, as one renewal appended them (RunReadStore.listLogChunks). */
export interface LogChunkRow {
  jobId: JobId;
  fence: number;
  /** 1, 2, ... within the attempt, in the order the renewals landed. */
  seq: number;
  text: string;
  writtenAt: Date;
}

/** Which streamed log lines to read: one attempt's (by its fence), after a chunk already read. */
export interface LogChunksQuery {
  jobId: JobId;
  fence: number;
  afterSeq?: number;
  /** At most this many chunks (1 to 1,000, default 200). */
  limit?: number;
}
