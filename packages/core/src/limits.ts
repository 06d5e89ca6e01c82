import { InvalidInputError } from './errors';

/**
 * Every limit the product enforces, named in one place so the validator, the API,
 * the docs and the tests all quote the same numbers.
 */
export const LIMITS = {
  /** A DAG must fit one owning leader's memory and one store transaction at run start. */
  maxTasksPerDag: 20_000,
  maxDependenciesPerTask: 20_000,
  maxIdLength: 128,
  maxNameLength: 200,
  /** The serialized spec, in bytes of UTF-8 JSON. */
  maxSpecBytes: 4 * 1024 * 1024,
  /** One task's `config`, in bytes of UTF-8 JSON. */
  maxTaskConfigBytes: 16 * 1024,
  /** Total attempts of a task: the first one plus retries. */
  maxAttempts: 25,
  /**
   * Expired leases a job may lose without their holder ever renewing them before one
   * counts as an attempt: a scheduler node that crashes between granting a lease and
   * delivering it must not use up a job's only attempt, while a job that stops its
   * worker at once still runs out in the end.
   */
  maxLostLeases: 3,
  maxRetryBackoffMs: 24 * 60 * 60 * 1000,
  maxTimeoutMs: 24 * 60 * 60 * 1000,
  minIntervalMs: 1_000,
  maxMaxActiveRuns: 1_000,
  /** How far back the `all` catch-up policy reaches. */
  maxCatchupWindowMs: 30 * 24 * 60 * 60 * 1000,
  /** The most runs one tick creates for one DAG, so a long outage cannot flood the store. */
  maxRunsPerDagPerTick: 1_000,
  /** A job's result (output plus logs), in bytes of UTF-8 JSON. */
  maxResultBytes: 256 * 1024,
  /**
   * A job's output alone, in bytes of UTF-8 JSON. It is handed to every task downstream of
   * the job, so it is kept to what a handler can take in as an argument; large data belongs
   * elsewhere, with a reference to it in the output.
   */
  maxOutputBytes: 64 * 1024,
  /**
   * All the upstream outputs one job is handed, in bytes of UTF-8 JSON: a task with
   * thousands of dependencies would otherwise be handed hundreds of megabytes.
   */
  maxUpstreamOutputBytes: 4 * 1024 * 1024,
  /**
   * Levels of arrays and objects in any free-form JSON a caller sends (a job's output, a
   * worker's metadata, a DAG spec): far more than real data needs, and far less than what
   * exhausts the stack of a recursive walk or PostgreSQL's jsonb parser.
   */
  maxJsonDepth: 64,
  /** A failed attempt's error message, in UTF-16 characters (as JavaScript counts a string's length). */
  maxErrorLength: 64 * 1024,
  /**
   * A running job's log lines one renewal carries for one lease, in UTF-16 characters: the
   * worker holds at most this much between renewals and drops (and says so) the rest.
   */
  maxLogChunkChars: 16 * 1024,
  /** All the log lines streamed for one attempt, in UTF-16 characters; the store keeps no more. */
  maxStreamedLogChars: 1024 * 1024,
  /** The metadata a worker registers with, in bytes of UTF-8 JSON. */
  maxWorkerMetaBytes: 16 * 1024,
  /** Ids in one getJobs read. */
  maxJobsPerRead: 10_000,
  /** Slot instants one due read may leave out (DueReadOptions.skipSlots). */
  maxSkippedSlots: 1_000,
  /** Parameters one DAG may declare. */
  maxParamsPerDag: 100,
  /** A parameter's name, in characters (it becomes part of an environment variable's name). */
  maxParamNameLength: 64,
  /** A string parameter's value, in characters. */
  maxParamValueLength: 4_096,
  /** Values one parameter's enum may list. */
  maxParamEnumValues: 100,
  /**
   * A run's resolved parameters, in bytes of UTF-8 JSON. They travel in the notice that
   * tells a leader of a triggered run, which PostgreSQL keeps under 8,000 bytes.
   */
  maxRunParamsBytes: 6_000,
  /**
   * Slots one backfill may cover without `confirm: true`: a month of an hourly DAG (720)
   * needs it, so a range typed wrong is seen before it makes runs.
   */
  backfillConfirmSlots: 500,
  /** Slots one backfill may cover at all: eleven years of an hourly DAG. */
  maxBackfillSlots: 100_000,
  /** A manual trigger's request key, in characters. */
  maxRequestKeyLength: 100,
  /**
   * Any one string of a console or API request (a value or a key), in bytes of UTF-8: more
   * than any field needs (a task's whole config is at most maxTaskConfigBytes), checked
   * for every string before a field's own limit (input/boundary.ts).
   */
  maxInputStringBytes: 64 * 1024,
  /**
   * Events a scheduler node holds for the store's event log while writing them fails (a
   * store outage); beyond it the oldest are dropped and counted in events_dropped_total.
   * At a few hundred bytes each this bounds the buffer to tens of megabytes, minutes of
   * events at the mission's load.
   */
  maxBufferedEvents: 100_000,
  /**
   * Effect outcomes one attempt may report with its result (@fenceline/effects): a job's
   * effects are a handful of writes, and each report is stored with the attempt.
   */
  maxEffectsPerAttempt: 32,
  /** An effect report's key, in characters: the effect ledgers' own limit. */
  maxEffectKeyChars: 1024,
  /** An effect report's sink name (`postgres`, `http`, a name of the user's), in characters. */
  maxEffectSinkChars: 64,
} as const;

/** Refuses a getJobs read of more than LIMITS.maxJobsPerRead ids. */
export function checkJobsPerRead(jobIds: readonly string[]): void {
  if (jobIds.length > LIMITS.maxJobsPerRead) {
    throw new InvalidInputError(`one read may ask for at most ${LIMITS.maxJobsPerRead} jobs, got ${jobIds.length}`, { jobs: jobIds.length, limit: LIMITS.maxJobsPerRead });
  }
}

/**
 * Why a run of `jobs` jobs can never start, or null if it can: a run's jobs are its DAG
 * version's tasks, at most LIMITS.maxTasksPerDag. The stores refuse such a start with this
 * message (checkJobsPerRun), and a leader fails such a run with it as the reason rather
 * than send it into a batch the store would refuse whole.
 */
export function jobsPerRunRefusal(jobs: number): string | null {
  return jobs > LIMITS.maxTasksPerDag ? `a run may have at most ${LIMITS.maxTasksPerDag} jobs, got ${jobs}` : null;
}

/** Refuses, before anything is written, a start of any run with more jobs than a run may hold. */
export function checkJobsPerRun(runs: readonly { jobs: readonly unknown[]; runId?: string; dagId?: string }[]): void {
  for (const { jobs, ...which } of runs) {
    const refusal = jobsPerRunRefusal(jobs.length);
    if (refusal) throw new InvalidInputError(refusal, { ...which, jobs: jobs.length, limit: LIMITS.maxTasksPerDag });
  }
}

/**
 * Refuses a trigger's request key that is not 1 to LIMITS.maxRequestKeyLength letters,
 * digits, `_` or `-`: the key is stored with the run and compared byte for byte, so it is
 * kept to characters every client sends and logs the same way.
 */
export function checkRequestKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0 || key.length > LIMITS.maxRequestKeyLength || !/^[A-Za-z0-9_-]+$/.test(key)) {
    throw new InvalidInputError(`requestKey must be 1 to ${LIMITS.maxRequestKeyLength} letters, digits, _ or -`, { field: 'requestKey', limit: LIMITS.maxRequestKeyLength });
  }
  return key;
}

/** The slot instants a due read leaves out, refused past LIMITS.maxSkippedSlots or when not valid dates. */
export function checkSkippedSlots(slots: readonly Date[]): readonly Date[] {
  if (slots.length > LIMITS.maxSkippedSlots) {
    throw new InvalidInputError(`one due read may leave out at most ${LIMITS.maxSkippedSlots} slots, got ${slots.length}`, { slots: slots.length, limit: LIMITS.maxSkippedSlots });
  }
  for (const slot of slots) {
    if (!(slot instanceof Date) || Number.isNaN(slot.getTime())) throw new InvalidInputError('a skipped slot must be a valid Date', { slot: String(slot) });
  }
  return slots;
}

export const DEFAULTS = {
  capFraction: 0.3,
  leaseTtlMs: 90_000,
  renewIntervalMs: 30_000,
  shardLeaseTtlMs: 15_000,
  shardRenewIntervalMs: 5_000,
  tickIntervalMs: 1_000,
  shardCount: 16,
  timeoutMs: 60 * 60 * 1000,
  retryBackoffMs: 5_000,
  retryBackoffMaxMs: 5 * 60 * 1000,
  catchupWindowMs: 24 * 60 * 60 * 1000,
  /** Under the `none` policy a slot this late still runs; older ones are skipped. */
  lateGraceMs: 2 * 60 * 1000,
  maxActiveRuns: 1,
  /** Runs of one backfill queued or running at once, when its request names no number. */
  backfillMaxActiveRuns: 4,
} as const;

/** The inputs of a store's contentionView: a node id of 1 to 200 characters and a live window of 1 ms to a day. */
export function checkContention(nodeId: string, liveWindowMs: number): void {
  if (typeof nodeId !== 'string' || nodeId.length === 0 || nodeId.length > 200) {
    throw new InvalidInputError('a node id must be a string of 1 to 200 characters', { nodeId: String(nodeId).slice(0, 200) });
  }
  if (!Number.isInteger(liveWindowMs) || liveWindowMs < 1 || liveWindowMs > 86_400_000) {
    throw new InvalidInputError(`a node live window must be an integer from 1 to 86400000 ms, got ${liveWindowMs}`, { liveWindowMs });
  }
}
