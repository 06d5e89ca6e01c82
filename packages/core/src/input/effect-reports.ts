import { InvalidInputError } from '../errors';
import { LIMITS } from '../limits';
import { characterProblem } from './free-form';

/** How one effect ended, as @fenceline/effects decides it at the sink. */
export const EFFECT_OUTCOMES = ['applied', 'already-applied', 'stale'] as const;
export type EffectOutcomeWord = (typeof EFFECT_OUTCOMES)[number];

/**
 * One effect's outcome as a worker reports it with its job's result and the store keeps it
 * with the attempt: which key, which sink decided, how it ended, under which fence, and the
 * fence the sink had recorded (the higher fence that refused a stale attempt, or the fence
 * an `already-applied` effect was applied under).
 */
export interface EffectRecord {
  key: string;
  sink: string;
  outcome: EffectOutcomeWord;
  fence: number;
  recordedFence?: number;
}

const SINK_PATTERN = /^[A-Za-z0-9_.-]+$/;

function fenceProblem(value: unknown): string | null {
  return Number.isSafeInteger(value) && (value as number) >= 0 ? null : 'must be a whole number of at least 0';
}

/** Why one effect report cannot be stored, or null: the field's path and what is wrong with it. */
function recordProblem(r: unknown): { field: string; message: string } | null {
  if (r === null || typeof r !== 'object' || Array.isArray(r)) return { field: '', message: 'must be an object { key, sink, outcome, fence, recordedFence? }' };
  const e = r as Record<string, unknown>;
  for (const name of Object.keys(e)) {
    if (!['key', 'sink', 'outcome', 'fence', 'recordedFence'].includes(name)) return { field: name, message: 'is not a field of an effect report' };
  }
  if (typeof e.key !== 'string' || e.key.length === 0 || e.key.length > LIMITS.maxEffectKeyChars) {
    return { field: 'key', message: `must be a string of 1 to ${LIMITS.maxEffectKeyChars} characters` };
  }
  const keyChars = characterProblem(e.key);
  if (keyChars !== null) return { field: 'key', message: keyChars };
  if (typeof e.sink !== 'string' || e.sink.length === 0 || e.sink.length > LIMITS.maxEffectSinkChars || !SINK_PATTERN.test(e.sink)) {
    return { field: 'sink', message: `must be 1 to ${LIMITS.maxEffectSinkChars} letters, digits, _, . or -` };
  }
  if (!EFFECT_OUTCOMES.includes(e.outcome as EffectOutcomeWord)) return { field: 'outcome', message: `must be one of ${EFFECT_OUTCOMES.join(', ')}` };
  const fence = fenceProblem(e.fence);
  if (fence !== null) return { field: 'fence', message: fence };
  if (e.recordedFence !== undefined) {
    const recorded = fenceProblem(e.recordedFence);
    if (recorded !== null) return { field: 'recordedFence', message: recorded };
  }
  return null;
}

/**
 * Why an attempt's effect reports cannot be stored, or null if they can (absent or null
 * means none were reported). Both stores make this check on each item before it joins a
 * statement, as the worker router does in its schema, so a bad report is refused alone as
 * INVALID_INPUT naming its field and writes nothing.
 */
export function effectsProblem(jobId: string, effects: unknown): InvalidInputError | null {
  if (effects === null || effects === undefined) return null;
  if (!Array.isArray(effects)) return new InvalidInputError('effects: must be an array of effect reports', { jobId, field: 'effects' });
  if (effects.length > LIMITS.maxEffectsPerAttempt) {
    return new InvalidInputError(`effects: an attempt may report at most ${LIMITS.maxEffectsPerAttempt} effects (LIMITS.maxEffectsPerAttempt), got ${effects.length}`, {
      jobId,
      field: 'effects',
      limit: LIMITS.maxEffectsPerAttempt,
    });
  }
  for (let i = 0; i < effects.length; i++) {
    const problem = recordProblem(effects[i]);
    if (problem !== null) {
      const field = ['effects', i, ...(problem.field ? [problem.field] : [])].join('.');
      return new InvalidInputError(`${field}: ${problem.message}`, { jobId, field });
    }
  }
  return null;
}

/** The reports as the stores keep them: only the known fields, so nothing else rides along; null for none. */
export function storedEffects(effects: readonly EffectRecord[] | null | undefined): EffectRecord[] | null {
  if (!effects || effects.length === 0) return null;
  return effects.map((e) => ({ key: e.key, sink: e.sink, outcome: e.outcome, fence: e.fence, ...(e.recordedFence !== undefined ? { recordedFence: e.recordedFence } : {}) }));
}
