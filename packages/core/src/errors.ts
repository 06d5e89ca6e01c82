/**
 * The closed set of typed refusals. Every layer (store, scheduler API, CLI, console)
 * reports a refusal with one of these codes so an operator sees the same words
 * everywhere, and a client can branch on `code` without parsing messages.
 */
export const ERROR_CODES = [
  'STALE_FENCE',
  'FORGED_FENCE',
  'LEASE_LOST',
  'DEPOSED_LEADER',
  'NOT_FOUND',
  'INVALID_DAG',
  'INVALID_INPUT',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'TOO_LARGE',
  'KEY_REUSED',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

export abstract class FencelineError extends Error {
  abstract readonly code: ErrorCode;
  /** Extra facts that explain the refusal (fences, epochs, ids); safe to show and log. */
  readonly details: Record<string, unknown>;
  constructor(message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.details = details;
    this.name = new.target.name;
  }
  toJSON(): { code: ErrorCode; message: string; details: Record<string, unknown> } {
    return { code: this.code, message: this.message, details: this.details };
  }
}

/** A write carried a fence lower than the one on record: its lease was superseded. */
export class StaleFenceError extends FencelineError {
  readonly code = 'STALE_FENCE' as const;
}
/** A write carried a fence higher than any ever issued for the job. */
export class ForgedFenceError extends FencelineError {
  readonly code = 'FORGED_FENCE' as const;
}
/** The fence matches but the lease is no longer live (expired, finished, or held by someone else). */
export class LeaseLostError extends FencelineError {
  readonly code = 'LEASE_LOST' as const;
}
/** A shard leader's epoch is no longer current: another node leads the shard now. */
export class DeposedLeaderError extends FencelineError {
  readonly code = 'DEPOSED_LEADER' as const;
}
export class NotFoundError extends FencelineError {
  readonly code = 'NOT_FOUND' as const;
}
/** A DAG spec failed validation; `details.issues` lists every problem found. */
export class InvalidDagError extends FencelineError {
  readonly code = 'INVALID_DAG' as const;
  constructor(
    message: string,
    readonly issues: DagIssue[] = [],
  ) {
    super(message, { issues });
  }
}
export class InvalidInputError extends FencelineError {
  readonly code = 'INVALID_INPUT' as const;
}
export class UnauthorizedError extends FencelineError {
  readonly code = 'UNAUTHORIZED' as const;
}
export class ForbiddenError extends FencelineError {
  readonly code = 'FORBIDDEN' as const;
}
export class TooLargeError extends FencelineError {
  readonly code = 'TOO_LARGE' as const;
}
/**
 * A request key its caller already used for a different request (another body, another
 * target): the key names one request, so the second is refused and writes nothing.
 */
export class KeyReusedError extends FencelineError {
  readonly code = 'KEY_REUSED' as const;
}

/**
 * What a DagIssue is about, so a client (the console's editor, a script) can branch on it
 * instead of reading the message, whose words may change:
 * - `shape`: a field has the wrong type, format or range, is missing, or is not known;
 * - `not-json`: the spec is not plain JSON data (a cycle of references, a BigInt);
 * - `no-tasks`: the DAG has no tasks;
 * - `limit`: a size limit of LIMITS is exceeded (spec bytes, tasks, dependencies, config bytes);
 * - `duplicate-task`: two tasks share an id;
 * - `self-dependency`, `unknown-dependency`, `duplicate-dependency`: a bad dependsOn entry;
 * - `cycle`: tasks that depend on each other in a loop (`taskIds` lists the loop in order);
 * - `more-cycles`: the cycles past the first twenty, in one issue (`taskIds` lists their
 *   tasks, in no loop order);
 * - `retry-backoff`: retryBackoffMaxMs below retryBackoffMs;
 * - `config`: a built-in task type's config fails its schema;
 * - `bad-timezone`: an unknown schedule time zone;
 * - `bad-cron`: a cron expression that does not parse, or never matches;
 * - `resource-limit`: a task consumes a resource limit that does not exist, or more units
 *   than the limit has (checked by the store at apply time, against the limits it holds).
 */
export const DAG_ISSUE_KINDS = [
  'shape',
  'not-json',
  'no-tasks',
  'limit',
  'duplicate-task',
  'self-dependency',
  'unknown-dependency',
  'duplicate-dependency',
  'cycle',
  'more-cycles',
  'retry-backoff',
  'config',
  'bad-timezone',
  'bad-cron',
  'resource-limit',
] as const;

export type DagIssueKind = (typeof DAG_ISSUE_KINDS)[number];

/** One problem in a DAG spec, located by a path into the spec (e.g. `tasks.3.dependsOn`). */
export interface DagIssue {
  kind: DagIssueKind;
  path: string;
  message: string;
  /** Task ids involved, so an editor can highlight them (e.g. the members of a cycle). */
  taskIds?: string[];
}

const BY_CODE: Record<ErrorCode, new (message: string, details?: Record<string, unknown>) => FencelineError> = {
  STALE_FENCE: StaleFenceError,
  FORGED_FENCE: ForgedFenceError,
  LEASE_LOST: LeaseLostError,
  DEPOSED_LEADER: DeposedLeaderError,
  NOT_FOUND: NotFoundError,
  INVALID_DAG: class extends InvalidDagError {
    constructor(message: string, details: Record<string, unknown> = {}) {
      super(message, (details.issues as DagIssue[] | undefined) ?? []);
    }
  },
  INVALID_INPUT: InvalidInputError,
  UNAUTHORIZED: UnauthorizedError,
  FORBIDDEN: ForbiddenError,
  TOO_LARGE: TooLargeError,
  KEY_REUSED: KeyReusedError,
};

/** Rebuilds a typed error from its wire form ({code, message, details}). */
export function errorFromJSON(value: { code: string; message: string; details?: Record<string, unknown> }): FencelineError {
  const Ctor = BY_CODE[value.code as ErrorCode] ?? InvalidInputError;
  return new Ctor(value.message, value.details ?? {});
}

export function isFencelineError(value: unknown): value is FencelineError {
  return value instanceof FencelineError;
}
