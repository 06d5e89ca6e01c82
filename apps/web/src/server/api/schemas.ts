import { z } from 'zod';
import { LIMITS, MAX_REASON_LENGTH, RUN_ACTION_KINDS, RUN_CURSOR_MAX_LENGTH, storableText, type RunActionKind } from '@fenceline/core';

/**
 * The schemas the HTTP API checks requests with, and the ones its OpenAPI document is made
 * from, so the document cannot say one thing while the handlers check another. The checks
 * match the console procedures' inputs, which the handlers then call.
 */

/** A path's DAG id as it comes: an id no DAG could have is answered NOT_FOUND by the read, INVALID_INPUT by a write. */
export const dagIdPath = z.object({ id: z.string().min(1).max(2000).describe('The DAG id') });
export const runIdPath = z.object({ id: z.string().max(200).describe('The run id, a whole number in plain decimal') });
export const actionIdPath = z.object({
  id: z
    .string()
    .regex(/^[0-9]{1,19}$/, 'must be an action id')
    .describe('The run action id'),
});

export const dagListQuery = z.strictObject({
  search: storableText().max(200).optional().describe('Matches DAG ids containing this text'),
  sort: z.enum(['id', 'nextRunAt', 'updatedAt']).optional(),
  direction: z.enum(['asc', 'desc']).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional().describe('DAGs a page, 50 by default'),
  offset: z.coerce.number().int().min(0).max(10_000_000).optional(),
});

/** A DAG spec, as `fenceline apply` reads it; the store validates it and lists every problem as an INVALID_DAG issue. */
export const applyBody = z.record(z.string(), z.unknown()).describe('A DAG spec (see the README, "DAG specs")');

export const triggerBody = z.strictObject({
  params: z.record(z.string().max(LIMITS.maxParamNameLength), z.unknown()).optional().describe("Values for the DAG's declared params; each bad one is an issue named params.NAME"),
});

/** The runs list's filters, as the console's Runs page and `fenceline runs` take them. */
export const runListQuery = z.strictObject({
  dag: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('Only runs of this DAG'),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']).optional(),
  trigger: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('schedule, manual, backfill, rerun, ...'),
  from: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('Runs scheduled at or after this instant (ISO 8601 with a zone)'),
  to: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('Runs scheduled before this instant (ISO 8601 with a zone)'),
  order: z.enum(['newest', 'oldest']).optional(),
  cursor: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('A next or previous cursor of an earlier page with the same filters'),
  limit: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('Runs a page, 1 to 500, 50 by default'),
});

export const runActionBody = z.strictObject({
  kind: z.enum(RUN_ACTION_KINDS as [RunActionKind, ...RunActionKind[]]),
  taskIds: z.array(z.string().max(LIMITS.maxIdLength)).max(LIMITS.maxTasksPerDag).optional().describe('The tasks to act on; none acts on the whole run'),
  downstream: z.boolean().optional().describe('Also every task below the named ones'),
  reason: z.string().max(MAX_REASON_LENGTH).nullable().optional().describe('Why; a mark needs one'),
});

const instant = z.iso.datetime({ offset: true });

// The answers' schemas name the fields a client relies on; the rows may carry more.
export const dagRowSchema = z.looseObject({
  id: z.string(),
  version: z.number().int(),
  paused: z.boolean(),
  nextRunAt: instant.nullable(),
  spec: z.record(z.string(), z.unknown()),
});
export const dagListAnswer = z.looseObject({ rows: z.array(z.looseObject({ id: z.string() })), total: z.number().int() });
export const dagAnswer = z.looseObject({ dag: dagRowSchema, versions: z.array(z.looseObject({ version: z.number().int(), spec: z.record(z.string(), z.unknown()) })) });
export const appliedAnswer = z.object({ dagId: z.string(), version: z.number().int(), created: z.boolean(), paused: z.boolean().nullable() });
export const runRowSchema = z.looseObject({
  id: z.string(),
  dagId: z.string(),
  dagVersion: z.number().int(),
  scheduledAt: instant,
  trigger: z.string(),
  state: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
  params: z.record(z.string(), z.unknown()),
});
export const runPageAnswer = z.object({ rows: z.array(runRowSchema), next: z.string().nullable(), previous: z.string().nullable() });
export const jobRowSchema = z.looseObject({
  id: z.string(),
  taskId: z.string(),
  state: z.string(),
  attempt: z.number().int().describe('Attempts counted against the retry budget since the run started or the task was last cleared'),
  fence: z.number().int(),
  history: z
    .object({
      seen: z.number().int().describe("Attempts through the job's whole life, as the run page numbers them (1, 2, 3 ...); a clear does not reset it"),
      lastClear: z
        .object({ kind: z.string(), by: z.string(), at: instant, reason: z.string().nullable() })
        .nullable()
        .describe('The last clear or retry from failure that reset the retry budget, and who asked for it'),
    })
    .optional(),
  result: z
    .object({ outcome: z.enum(['succeeded', 'failed']), fence: z.number().int() })
    .nullable()
    .describe('The accepted result, if any'),
});
export const runAnswer = z.object({ run: runRowSchema, jobs: z.array(jobRowSchema) });
export const runActionSchema = z.looseObject({
  id: z.string(),
  runId: z.string(),
  kind: z.enum(RUN_ACTION_KINDS as [RunActionKind, ...RunActionKind[]]),
  taskIds: z.array(z.string()),
  downstream: z.boolean(),
  reason: z.string().nullable(),
  state: z.enum(['pending', 'applied']),
  result: z.looseObject({}).nullable(),
});

/** A limit's name as the path gives it; the store checks it and names the field `name` when it is not one. */
export const limitNamePath = z.object({ name: z.string().min(1).max(200).describe('The resource limit name') });
export const limitBody = z.strictObject({
  capacity: z.number().describe('Units jobs of every DAG may hold at once: a whole number, at least 1'),
});
export const limitRowSchema = z.looseObject({
  name: z.string(),
  capacity: z.number().int(),
  used: z.number().int().describe('Units held by live leases'),
  waiting: z.number().int().describe('Ready jobs that consume it and hold no lease yet'),
  updatedAt: instant,
});
export const limitListAnswer = z.object({
  limits: z.array(
    limitRowSchema.extend({
      waiters: z
        .array(z.looseObject({ jobId: z.string(), runId: z.string(), dagId: z.string(), taskId: z.string(), units: z.number().int() }))
        .describe('The oldest ready jobs waiting for it, at most waitersShown'),
    }),
  ),
  waitersShown: z.number().int(),
});
export const limitDeletedAnswer = z.object({ name: z.string(), deleted: z.literal(true) });
