import { z } from 'zod';
import {
  actionIdSchema,
  dagSpecSchema,
  EFFECT_OUTCOMES,
  JOB_STATE_WORDS,
  LIMITS,
  MAX_REASON_LENGTH,
  RUN_ACTION_KINDS,
  RUN_CURSOR_MAX_LENGTH,
  RUN_TRIGGERS,
  scheduleSchema,
  storableText,
  type JobStateWord,
  type RunTrigger,
} from '@fenceline/core';
import { type RunActionKind } from '@fenceline/core/store';

const RUN_STATES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/**
 * The schemas the HTTP API checks requests with, and the ones its OpenAPI document is made
 * from, so the document cannot say one thing while the handlers check another. The checks
 * match the console procedures' inputs, which the handlers then call.
 */

/** A path's DAG id as it comes: an id no DAG could have is answered NOT_FOUND by the read, INVALID_INPUT by a write. */
export const dagIdPath = z.object({ id: z.string().min(1).max(2000).describe('The DAG id') });
export const runIdPath = z.object({ id: z.string().max(200).describe('The run id, a whole number in plain decimal') });
export const actionIdPath = z.object({ id: actionIdSchema.describe('The run action id') });

export const dagListQuery = z.strictObject({
  search: storableText().max(200).optional().describe('Matches DAG ids containing this text'),
  sort: z.enum(['id', 'nextRunAt', 'updatedAt']).optional(),
  direction: z.enum(['asc', 'desc']).optional(),
  limit: z.coerce.number().int().min(1).max(200).optional().describe('DAGs a page, 50 by default'),
  offset: z.coerce.number().int().min(0).max(10_000_000).optional(),
});

/** A DAG spec, as `fenceline apply` reads it; the store validates it and lists every problem as an INVALID_DAG issue. */
export const applyBody = z.record(z.string(), z.unknown()).describe('A DAG spec (see docs/dag-specs.md)');

export const triggerBody = z.strictObject({
  params: z.record(z.string().max(LIMITS.maxParamNameLength), z.unknown()).optional().describe("Values for the DAG's declared params; each bad one is an issue named params.NAME"),
});

/** The runs list's filters, as the console's Runs page and `fenceline runs` take them. */
export const runListQuery = z.strictObject({
  dag: z.string().max(RUN_CURSOR_MAX_LENGTH).optional().describe('Only runs of this DAG'),
  state: z.enum(RUN_STATES).optional(),
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

/**
 * The answers' schemas: every field each answer carries, typed, and no other (the document
 * says `additionalProperties: false`), so a client generated from the document knows all
 * it gets. The API tests check every live answer against these, as the document gives them.
 */
export const instant = z.iso.datetime({ offset: true });
const count = z.number().int().min(0);

/** A stored spec: what `POST /dags` took, with every default filled in. */
export const storedSpecSchema = dagSpecSchema.extend({ id: z.string() }).describe('The DAG spec as stored, every default filled in');
const scheduleAnswer = scheduleSchema;

export const dagRowSchema = z.object({
  id: z.string(),
  shard: count,
  version: z.number().int().min(1),
  spec: storedSpecSchema,
  paused: z.boolean(),
  nextRunAt: instant.nullable().describe('The next slot the tick looks at; null for a manual DAG'),
  createdAt: instant,
  updatedAt: instant,
});
const dagListRowSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  shard: count,
  version: z.number().int().min(1),
  schedule: scheduleAnswer,
  paused: z.boolean(),
  nextRunAt: instant.nullable(),
  updatedAt: instant,
  taskCount: count,
  lastRun: z
    .object({ id: z.string(), state: z.enum(RUN_STATES), scheduledAt: instant, endedAt: instant.nullable() })
    .nullable()
    .describe('The latest run by id, null before the first'),
  held: count.describe('Leases its jobs hold now'),
  shareOfPool: z.number().min(0).describe('held as a fraction of the live slots of the pool'),
  cap: z.number().describe("The DAG's fair-share cap, a fraction of the pool"),
});
export const dagListAnswer = z.object({
  rows: z.array(dagListRowSchema),
  total: count,
  totalIsEstimate: z.boolean().describe("Whether total is the planner's estimate (an unfiltered list of a large table)"),
  poolSlots: count.describe('Slots of live workers'),
  queryMs: z.number().min(0).describe('How long the store took to answer'),
});
const dagVersionSchema = z.object({ dagId: z.string(), version: z.number().int().min(1), spec: storedSpecSchema, createdAt: instant });
export const dagAnswer = z.object({ dag: dagRowSchema, versions: z.array(dagVersionSchema) });
export const appliedAnswer = z.object({
  dagId: z.string(),
  version: z.number().int().min(1),
  created: z.boolean(),
  repeated: z.boolean().optional().describe('Present and true when an Idempotency-Key repeated an earlier request'),
  paused: z.boolean().nullable().describe("The DAG's paused state when the spec changed it, else null"),
});
export const runRowSchema = z.object({
  id: z.string(),
  dagId: z.string(),
  dagVersion: z.number().int().min(1),
  shard: count,
  scheduledAt: instant,
  trigger: z.enum(RUN_TRIGGERS as [RunTrigger, ...RunTrigger[]]),
  state: z.enum(RUN_STATES),
  createdAt: instant,
  startedAt: instant.nullable(),
  endedAt: instant.nullable(),
  params: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])).describe("The run's resolved parameters"),
});
export const runPageAnswer = z.object({ rows: z.array(runRowSchema), next: z.string().nullable(), previous: z.string().nullable() });
/** A job state as a user reads it: a job leased to a worker is running. */
export const jobStateWordSchema = z.enum(JOB_STATE_WORDS as [JobStateWord, ...JobStateWord[]]);
/** One effect outcome an attempt reported (@fenceline/effects, or TaskContext's reportEffect). */
export const effectReportAnswer = z.object({
  key: z.string().describe('The effect key: by default the task within its run (dagId/runId/taskId)'),
  sink: z.string().describe('Which sink decided: postgres, postgres-upsert, http, file, or a name the task gave'),
  outcome: z
    .enum(EFFECT_OUTCOMES)
    .describe('applied: landed under this fence; already-applied: an earlier attempt applied it; stale: refused, a higher fence was already recorded'),
  fence: count.describe('The fence the attempt carried'),
  recordedFence: count.optional().describe('For stale, the higher fence the sink had recorded; for already-applied, the fence the effect was applied under'),
});
export const jobRowSchema = z.object({
  id: z.string(),
  runId: z.string(),
  dagId: z.string(),
  shard: count,
  taskId: z.string(),
  state: jobStateWordSchema,
  attempt: count.describe('Attempts counted against the retry budget since the run started or the task was last cleared'),
  maxAttempts: z.number().int().min(1),
  fence: count,
  holder: z.string().nullable().describe('The worker that holds (or last held) the lease'),
  leaseExpiresAt: instant.nullable(),
  nextAttemptAt: instant.nullable(),
  priority: z.number().int(),
  retryBackoffMs: count,
  retryBackoffMaxMs: count,
  timeoutMs: count,
  readyAt: instant.nullable(),
  leasedAt: instant.nullable(),
  endedAt: instant.nullable(),
  lastError: z.string().nullable(),
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
    .object({
      outcome: z.enum(['succeeded', 'failed']),
      fence: count,
      effects: z.array(effectReportAnswer).describe("How the accepted attempt's fenced effects ended, in the order reported; empty when it recorded none"),
    })
    .nullable()
    .describe('The accepted result, if any'),
});
export const runAnswer = z.object({ run: runRowSchema, jobs: z.array(jobRowSchema) });
export const runActionSchema = z.object({
  id: z.string(),
  runId: z.string(),
  dagId: z.string(),
  shard: count,
  kind: z.enum(RUN_ACTION_KINDS as [RunActionKind, ...RunActionKind[]]),
  taskIds: z.array(z.string()),
  downstream: z.boolean(),
  reason: z.string().nullable(),
  requestedBy: z.string(),
  state: z.enum(['pending', 'applied']),
  createdAt: instant,
  appliedAt: instant.nullable(),
  result: z
    .object({
      changed: z.array(z.object({ taskId: z.string(), from: jobStateWordSchema, to: jobStateWordSchema })),
      runState: z.enum(RUN_STATES),
      note: z.string().optional().describe('Why nothing changed, when nothing did'),
    })
    .nullable()
    .describe('What the leader did, once applied'),
});

/** A limit's name as the path gives it; the store checks it and names the field `name` when it is not one. */
export const limitNamePath = z.object({ name: z.string().min(1).max(200).describe('The resource limit name') });
export const limitBody = z.strictObject({
  capacity: z.number().describe('Units jobs of every DAG may hold at once: a whole number, at least 1'),
});
export const limitRowSchema = z.object({
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
        .array(z.object({ jobId: z.string(), runId: z.string(), dagId: z.string(), taskId: z.string(), units: z.number().int(), readyAt: instant.nullable() }))
        .describe('The oldest ready jobs waiting for it, at most waitersShown'),
    }),
  ),
  waitersShown: z.number().int(),
});
export const limitDeletedAnswer = z.object({ name: z.string(), deleted: z.literal(true) });
