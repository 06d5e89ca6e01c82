import { z } from 'zod';
import { NAME_CHARACTERS, NAME_PATTERN, type DagId } from './ids';
import { DEFAULTS, LIMITS } from './limits';
import { TRIGGER_RULES } from './run/trigger-rules';
import { labelsSchema, poolNameSchema } from './routing/offer';
import { taskResourcesSchema } from './resources/limits';

/**
 * The DAG spec as an author writes it (JSON or YAML). Parsing fills defaults; the
 * structural checks that zod cannot express (cycles, unknown dependencies, cron syntax,
 * sizes) live in dag/validate.ts. A spec is immutable once stored as a version.
 */
const id = z.string().min(1, 'must not be empty').max(LIMITS.maxIdLength, `must be at most ${LIMITS.maxIdLength} characters`).regex(NAME_PATTERN, NAME_CHARACTERS);

export const cronScheduleSchema = z.object({
  kind: z.literal('cron'),
  cron: z.string().min(1),
  timezone: z.string().default('UTC'),
});
export const intervalScheduleSchema = z.object({
  kind: z.literal('interval'),
  everyMs: z.number().int().min(LIMITS.minIntervalMs),
  /** Slots fall on anchor + k * everyMs; defaults to the Unix epoch. */
  anchor: z.iso.datetime({ offset: true }).optional(),
});
export const manualScheduleSchema = z.object({ kind: z.literal('manual') });
export const scheduleSchema = z.discriminatedUnion('kind', [cronScheduleSchema, intervalScheduleSchema, manualScheduleSchema]);

export const catchupSchema = z.object({
  /**
   * none: run a slot only if it is at most `lateGraceMs` late, skip older ones;
   * latest: after an outage run only the most recent missed slot;
   * all: run every missed slot within `windowMs`.
   */
  policy: z.enum(['none', 'latest', 'all']).default('latest'),
  windowMs: z.number().int().positive().max(LIMITS.maxCatchupWindowMs).default(DEFAULTS.catchupWindowMs),
});

export const sleepConfigSchema = z.object({ durationMs: z.number().int().min(0).max(LIMITS.maxTimeoutMs) });
export const noopConfigSchema = z.object({}).passthrough();
export const shellConfigSchema = z.object({
  command: z.string().min(1),
  args: z.array(z.string()).default([]),
  env: z.record(z.string(), z.string()).default({}),
  cwd: z.string().optional(),
});
export const httpConfigSchema = z.object({
  method: z.enum(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD']).default('GET'),
  url: z.url(),
  headers: z.record(z.string(), z.string()).default({}),
  body: z.string().optional(),
  expectStatus: z.array(z.number().int().min(100).max(599)).default([200, 201, 202, 204]),
});

/** Config schemas of the built-in job types; any other type is a named handler with free-form config. */
export const BUILTIN_CONFIG_SCHEMAS = {
  noop: noopConfigSchema,
  sleep: sleepConfigSchema,
  shell: shellConfigSchema,
  http: httpConfigSchema,
} as const;
export type BuiltinTaskType = keyof typeof BUILTIN_CONFIG_SCHEMAS;

export const taskSchema = z.object({
  id,
  type: z.string().min(1).max(LIMITS.maxIdLength),
  config: z.record(z.string(), z.unknown()).default({}),
  dependsOn: z.array(z.string()).default([]),
  /** Attempts after the first; 0 means a failure is final. */
  retries: z
    .number()
    .int()
    .min(0)
    .max(LIMITS.maxAttempts - 1)
    .default(0),
  /** Backoff before retry n is min(retryBackoffMs * 2^(n-1), retryBackoffMaxMs). */
  retryBackoffMs: z.number().int().min(0).max(LIMITS.maxRetryBackoffMs).default(DEFAULTS.retryBackoffMs),
  retryBackoffMaxMs: z.number().int().min(0).max(LIMITS.maxRetryBackoffMs).default(DEFAULTS.retryBackoffMaxMs),
  timeoutMs: z.number().int().positive().max(LIMITS.maxTimeoutMs).default(DEFAULTS.timeoutMs),
  /** Higher runs first among one DAG's ready jobs. */
  priority: z.number().int().min(-1000).max(1000).default(0),
  /** When the task may run, given how its dependencies ended (run/trigger-rules.ts); all_success when absent. */
  trigger: z.enum(TRIGGER_RULES).optional(),
  /** The worker pool that runs it (routing/offer.ts); the default pool when absent. */
  pool: poolNameSchema.optional(),
  /** Labels its worker must have, each `name` or `name=value`. */
  labels: labelsSchema.optional(),
  /** Units of named resource limits it holds while it runs (resources/limits.ts). */
  resources: taskResourcesSchema.optional(),
});

/**
 * A run parameter's declaration: a small subset of JSON Schema. A name must be usable as
 * the suffix of an environment variable (shell tasks see FENCELINE_PARAM_<NAME>), and a
 * default and the enum values must have the declared type, so every run of the DAG
 * resolves to values its tasks can rely on.
 */
export const PARAM_TYPES = ['string', 'number', 'integer', 'boolean'] as const;
export type ParamType = (typeof PARAM_TYPES)[number];
export type ParamValue = string | number | boolean;
/** Letters, digits and `_`, not starting with a digit: an environment variable's suffix. */
export const PARAM_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Whether `value` has the declared type (an integer is a number with no fraction). */
export function fitsParamType(type: ParamType, value: unknown): value is ParamValue {
  if (type === 'string') return typeof value === 'string';
  if (type === 'boolean') return typeof value === 'boolean';
  if (typeof value !== 'number' || !Number.isFinite(value)) return false;
  return type === 'number' || Number.isInteger(value);
}

export const paramSchema = z
  .object({
    type: z.enum(PARAM_TYPES),
    default: z.union([z.string().max(LIMITS.maxParamValueLength), z.number(), z.boolean()]).optional(),
    required: z.boolean().default(false),
    description: z
      .string()
      .max(LIMITS.maxNameLength * 5)
      .optional(),
    enum: z
      .array(z.union([z.string().max(LIMITS.maxParamValueLength), z.number(), z.boolean()]))
      .min(1)
      .max(LIMITS.maxParamEnumValues)
      .optional(),
  })
  .strict()
  .superRefine((param, ctx) => {
    if (param.default !== undefined && !fitsParamType(param.type, param.default)) {
      ctx.addIssue({ code: 'custom', path: ['default'], message: `the default must be of type ${param.type}` });
    }
    param.enum?.forEach((value, i) => {
      if (!fitsParamType(param.type, value)) ctx.addIssue({ code: 'custom', path: ['enum', i], message: `every enum value must be of type ${param.type}` });
    });
    if (param.default !== undefined && param.enum && !param.enum.includes(param.default)) {
      ctx.addIssue({ code: 'custom', path: ['default'], message: 'the default must be one of the enum values' });
    }
  });

export const paramsSchema = z
  .record(
    z
      .string()
      .max(LIMITS.maxParamNameLength, `a parameter name must be at most ${LIMITS.maxParamNameLength} characters`)
      .regex(PARAM_NAME_PATTERN, 'a parameter name must be letters, digits and _, not starting with a digit'),
    paramSchema,
  )
  .refine((params) => Object.keys(params).length <= LIMITS.maxParamsPerDag, `a DAG may declare at most ${LIMITS.maxParamsPerDag} parameters`);

export const dagSpecSchema = z.object({
  // A spec that passes is a DAG's id: the spec's validation is where a DagId is made.
  id: id.transform((text) => text as DagId),
  name: z.string().max(LIMITS.maxNameLength).optional(),
  description: z.string().max(10_000).optional(),
  schedule: scheduleSchema.default({ kind: 'manual' }),
  catchup: catchupSchema.default({ policy: 'latest', windowMs: DEFAULTS.catchupWindowMs }),
  maxActiveRuns: z.number().int().min(1).max(LIMITS.maxMaxActiveRuns).default(DEFAULTS.maxActiveRuns),
  /** Overrides the cluster's fair-share cap for this DAG (fraction of the pool). */
  capFraction: z.number().gt(0).max(1).optional(),
  /** Higher is served first when DAGs wait for the same free slots (fairshare/plan.ts); 0 when absent. */
  priority: z.number().int().min(-1000).max(1000).optional(),
  paused: z.boolean().default(false),
  /**
   * The parameters a run takes: a manual trigger may set them, scheduled runs use the
   * defaults. Left out rather than defaulted to {}, so the specs stored before parameters
   * existed keep their canonical form and applying them again is still no change.
   */
  params: paramsSchema.optional(),
  tasks: z.array(taskSchema),
});

export type DagSpecInput = z.input<typeof dagSpecSchema>;
export type DagSpec = z.output<typeof dagSpecSchema>;
export type TaskSpec = z.output<typeof taskSchema>;
export type ParamSpec = z.output<typeof paramSchema>;
export type Schedule = z.output<typeof scheduleSchema>;
export type CatchupPolicy = z.output<typeof catchupSchema>;
