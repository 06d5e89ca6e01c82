import { InvalidInputError } from '../errors';
import { LIMITS } from '../limits';
import { characterProblem, jsonProblem, type FreeFormProblem } from './free-form';

/**
 * The free-form checks of a worker write, made by both stores on each item before it joins
 * a statement: an item the store cannot take is refused on its own, as INVALID_INPUT naming
 * its field, and never reaches the statement it would share with other callers' items.
 * The routers make the same checks in their schemas; these hold for every other caller.
 * Sizes are not checked here: the stores refuse a result over LIMITS.maxResultBytes as
 * TOO_LARGE, and the walk over a value stops at the depth limit.
 */

function refusal(jobId: string | null, field: string, problem: string | FreeFormProblem): InvalidInputError {
  const { path, message } = typeof problem === 'string' ? { path: [] as (string | number)[], message: problem } : problem;
  const where = [field, ...path.map(String)].join('.');
  return new InvalidInputError(`${where}: ${message}`, jobId === null ? { field: where } : { jobId, field: where });
}

const JSON_LIMITS = { maxDepth: LIMITS.maxJsonDepth, maxBytes: Number.POSITIVE_INFINITY };

function textCharacters(text: unknown): string | null {
  if (text === null || text === undefined) return null;
  return typeof text === 'string' ? characterProblem(text) : 'must be a string';
}

/** Why a completion's output or logs cannot be stored, or null if they can. */
export function resultProblem(jobId: string, result: { output?: unknown; logs?: string | null }): InvalidInputError | null {
  const output = jsonProblem(result.output ?? null, JSON_LIMITS);
  if (output !== null) return refusal(jobId, 'output', output);
  const logs = textCharacters(result.logs);
  return logs === null ? null : refusal(jobId, 'logs', logs);
}

/** Why a failure's error or logs cannot be stored, or null if they can. */
export function failureProblem(jobId: string, failure: { error: string; logs?: string | null }): InvalidInputError | null {
  const error = typeof failure.error === 'string' ? characterProblem(failure.error) : 'must be a string';
  if (error !== null) return refusal(jobId, 'error', error);
  const logs = textCharacters(failure.logs);
  return logs === null ? null : refusal(jobId, 'logs', logs);
}

/** Why a worker's registration metadata cannot be stored, or null if it can. */
export function workerMetaProblem(meta: unknown): InvalidInputError | null {
  const problem = jsonProblem(meta ?? {}, JSON_LIMITS);
  return problem === null ? null : refusal(null, 'meta', problem);
}
