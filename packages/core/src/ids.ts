import { z } from 'zod';
import { InvalidInputError } from './errors';
import { LIMITS } from './limits';

/**
 * The ids every boundary (worker protocol, console, CLI, stores) reads, each with one
 * parser and one zod schema, so a value one boundary accepts is accepted by all of them.
 * A branded id can only be made by its parser (or a store decoding its own rows), so a
 * function that takes a JobId never sees text nobody checked.
 *
 * The zod schemas live here beside the parsers: the core already depends on zod for the
 * DAG spec, and keeping both in one module means the rule exists once.
 */
declare const brand: unique symbol;
type Branded<Name extends string> = string & { readonly [brand]: Name };

/** A job's id: a PostgreSQL bigint sequence value, printed in decimal. */
export type JobId = Branded<'JobId'>;
/** A run's id: a PostgreSQL bigint sequence value, printed in decimal. */
export type RunId = Branded<'RunId'>;
/** A DAG's id as its spec names it. */
export type DagId = Branded<'DagId'>;
/** A worker's id as the worker names itself when it registers. */
export type WorkerId = Branded<'WorkerId'>;
/** A backfill's id: a PostgreSQL bigint sequence value, printed in decimal. */
export type BackfillId = Branded<'BackfillId'>;
/** An operator action on a run (retry, mark, skip, cancel): a bigint sequence value. */
export type ActionId = Branded<'ActionId'>;
/** A notification channel's id: a bigint sequence value. */
export type ChannelId = Branded<'ChannelId'>;
/** A notification rule's id: a bigint sequence value. */
export type RuleId = Branded<'RuleId'>;
/** A notification's id: a bigint sequence value. */
export type NotificationId = Branded<'NotificationId'>;

/** The largest value of a PostgreSQL bigint, the type of every sequence id. */
export const MAX_SEQUENCE_ID = '9223372036854775807';
export const MAX_WORKER_ID_LENGTH = 200;

const DIGITS = /^[0-9]+$/;
/**
 * The shape of a sequence id for documents (OpenAPI) that cannot state the range; the
 * parsers check the range as well (sequenceIdProblem), so this is never the check itself.
 */
export const SEQUENCE_ID_SHAPE = '^[1-9][0-9]{0,18}$';
/** The spec's rule for DAG and task ids (spec.ts checks specs with it). */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
const WORKER_NAME = /^[A-Za-z0-9_.:@-]+$/;

export const NOT_A_NUMERIC_ID = 'must be a numeric id';
export const NAME_CHARACTERS = 'may contain only letters, digits, "_", "." and "-", and must start with a letter or digit';
const OUT_OF_RANGE = `must be a numeric id from 1 to ${MAX_SEQUENCE_ID}`;
const WORKER_CHARACTERS = 'may contain only letters, digits and _ . : @ -';

/**
 * Why text is not a sequence id, or null if it is one: decimal digits only (no sign, no
 * spaces, no exponent), no leading zero, from 1 up to what a bigint holds. Sequences
 * start at 1, so 0 names nothing; a longer number would fail the bigint cast in SQL.
 */
export function sequenceIdProblem(text: string): string | null {
  if (!DIGITS.test(text)) return NOT_A_NUMERIC_ID;
  if (text[0] === '0') return OUT_OF_RANGE;
  if (text.length > MAX_SEQUENCE_ID.length) return OUT_OF_RANGE;
  // Digit strings of equal length order as their numbers do.
  if (text.length === MAX_SEQUENCE_ID.length && text > MAX_SEQUENCE_ID) return OUT_OF_RANGE;
  return null;
}

/** Why text is not a DAG id (the rule of the spec's ids), or null if it is one. */
export function nameIdProblem(text: string): string | null {
  if (text.length === 0) return 'must not be empty';
  if (text.length > LIMITS.maxIdLength) return `must be at most ${LIMITS.maxIdLength} characters`;
  return NAME_PATTERN.test(text) ? null : NAME_CHARACTERS;
}

/** Why text is not a worker id, or null if it is one. */
export function workerIdProblem(text: string): string | null {
  if (text.length === 0) return 'must not be empty';
  if (text.length > MAX_WORKER_ID_LENGTH) return `must be at most ${MAX_WORKER_ID_LENGTH} characters`;
  return WORKER_NAME.test(text) ? null : WORKER_CHARACTERS;
}

export const isSequenceId = (value: unknown): value is string => typeof value === 'string' && sequenceIdProblem(value) === null;
export const isJobId = (value: unknown): value is JobId => isSequenceId(value);
export const isRunId = (value: unknown): value is RunId => isSequenceId(value);
export const isBackfillId = (value: unknown): value is BackfillId => isSequenceId(value);
export const isDagId = (value: unknown): value is DagId => typeof value === 'string' && nameIdProblem(value) === null;
export const isWorkerId = (value: unknown): value is WorkerId => typeof value === 'string' && workerIdProblem(value) === null;

/** `value` as an Id if `problemOf` finds nothing wrong, else an INVALID_INPUT error naming `field`. */
export function parseIdWith<Id extends string>(problemOf: (text: string) => string | null, value: unknown, field: string): Id {
  const problem = typeof value === 'string' ? problemOf(value) : 'must be a string';
  if (problem !== null) throw new InvalidInputError(`${field}: ${problem}`, { field, problem });
  return value as Id;
}

/**
 * The id, or an INVALID_INPUT error whose message and details name `field`. Every
 * boundary (console, HTTP API, CLI, worker protocol) reads ids through these, so 0, a
 * leading zero or a value above the largest bigint is refused the same way everywhere.
 */
export const parseJobId = (value: unknown, field = 'jobId'): JobId => parseIdWith<JobId>(sequenceIdProblem, value, field);
export const parseRunId = (value: unknown, field = 'runId'): RunId => parseIdWith<RunId>(sequenceIdProblem, value, field);
export const parseBackfillId = (value: unknown, field = 'backfillId'): BackfillId => parseIdWith<BackfillId>(sequenceIdProblem, value, field);
export const parseActionId = (value: unknown, field = 'actionId'): ActionId => parseIdWith<ActionId>(sequenceIdProblem, value, field);
export const parseChannelId = (value: unknown, field = 'channelId'): ChannelId => parseIdWith<ChannelId>(sequenceIdProblem, value, field);
export const parseRuleId = (value: unknown, field = 'ruleId'): RuleId => parseIdWith<RuleId>(sequenceIdProblem, value, field);
export const parseNotificationId = (value: unknown, field = 'notificationId'): NotificationId => parseIdWith<NotificationId>(sequenceIdProblem, value, field);
export const parseDagId = (value: unknown, field = 'dagId'): DagId => parseIdWith<DagId>(nameIdProblem, value, field);
export const parseWorkerId = (value: unknown, field = 'workerId'): WorkerId => parseIdWith<WorkerId>(workerIdProblem, value, field);

/** A zod string checked by `problemOf`; the issue carries its message, and zod adds the field's path. */
export function idSchemaOf(problemOf: (text: string) => string | null) {
  return z.string().superRefine((text, ctx) => {
    const problem = problemOf(text);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** A sequence id's zod string, its shape stated for JSON Schema documents. */
export const sequenceIdSchema = () => idSchemaOf(sequenceIdProblem).meta({ pattern: SEQUENCE_ID_SHAPE });

export const jobIdSchema = sequenceIdSchema().transform((text) => text as JobId);
export const runIdSchema = sequenceIdSchema().transform((text) => text as RunId);
export const backfillIdSchema = sequenceIdSchema().transform((text) => text as BackfillId);
export const actionIdSchema = sequenceIdSchema().transform((text) => text as ActionId);
export const channelIdSchema = sequenceIdSchema().transform((text) => text as ChannelId);
export const ruleIdSchema = sequenceIdSchema().transform((text) => text as RuleId);
export const notificationIdSchema = sequenceIdSchema().transform((text) => text as NotificationId);
export const dagIdSchema = idSchemaOf(nameIdProblem).transform((text) => text as DagId);
export const workerIdSchema = idSchemaOf(workerIdProblem).transform((text) => text as WorkerId);
