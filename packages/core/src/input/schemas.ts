import { z } from 'zod';
import { LIMITS } from '../limits';
import { EFFECT_OUTCOMES } from './effect-reports';
import { characterProblem, jsonProblems, textProblem, type FreeFormLimits } from './free-form';

/**
 * The free-form checks of free-form.ts as zod schemas, so every router refuses bad text and
 * JSON in its input schema, before any procedure runs, with an issue whose path names the
 * field (and the place inside it, for JSON).
 */

/** A string of at most `maxBytes` bytes of UTF-8 with no NUL and no lone surrogate. */
export function freeFormText(maxBytes: number) {
  return z.string().superRefine((text, ctx) => {
    const problem = textProblem(text, maxBytes);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/**
 * A string that may be looked up or matched but never needs the characters PostgreSQL
 * refuses: its length stays the caller's (for example z.string().max(200)) to check.
 */
export function storableText() {
  return z.string().superRefine((text, ctx) => {
    const problem = characterProblem(text);
    if (problem !== null) ctx.addIssue({ code: 'custom', message: problem });
  });
}

/** Any JSON value within the depth and size limits, with only storable strings and keys. */
export function freeFormJson(limits: FreeFormLimits) {
  return z.unknown().superRefine((value, ctx) => {
    for (const problem of jsonProblems(value, limits, 5)) ctx.addIssue({ code: 'custom', message: problem.message, path: problem.path });
  });
}

/** A job's output as a worker reports it. */
// A result's size is left to the store, which refuses the one result over
// LIMITS.maxResultBytes as TOO_LARGE, a typed refusal its worker acts on; a 400 here would
// refuse the worker's whole batch, which it would send again. The request body's limit
// bounds the walk meanwhile.
export const jobOutputSchema = freeFormJson({ maxDepth: LIMITS.maxJsonDepth, maxBytes: Number.POSITIVE_INFINITY });
/** A job's captured log lines, at most LIMITS.maxResultBytes characters. */
export const jobLogsSchema = storableText().max(LIMITS.maxResultBytes);
/** A failed attempt's error message. */
export const jobErrorSchema = storableText().max(LIMITS.maxErrorLength);
/** One effect outcome a worker reports with its job's result (the checks of effectsProblem, as a schema). */
export const effectReportSchema = z.strictObject({
  key: storableText().min(1).max(LIMITS.maxEffectKeyChars),
  sink: z
    .string()
    .min(1)
    .max(LIMITS.maxEffectSinkChars)
    .regex(/^[A-Za-z0-9_.-]+$/, 'must be letters, digits, _, . or -'),
  outcome: z.enum(EFFECT_OUTCOMES),
  fence: z.number().int().min(0),
  recordedFence: z.number().int().min(0).optional(),
});
/** The effect outcomes of one attempt, at most LIMITS.maxEffectsPerAttempt. */
export const jobEffectsSchema = z.array(effectReportSchema).max(LIMITS.maxEffectsPerAttempt);
/** A worker's registration metadata: an object of JSON values. */
export const workerMetaSchema = freeFormJson({ maxDepth: LIMITS.maxJsonDepth, maxBytes: LIMITS.maxWorkerMetaBytes }).pipe(z.record(z.string(), z.unknown()));
