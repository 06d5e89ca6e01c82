import { InvalidInputError, TooLargeError } from '../errors';
import { NAME_CHARACTERS, NAME_PATTERN } from '../ids';
import { LIMITS } from '../limits';
import { utf8ByteLength } from '../dag/limit-checks';
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

/**
 * Why a completion is too large to store, or null: an output over LIMITS.maxOutputBytes
 * (it is what downstream tasks are handed), or output and logs together over
 * LIMITS.maxResultBytes. Both stores refuse with this, and the worker fails such a job
 * with the same words before sending it, so the job's error says what to do.
 */
export function resultSizeRefusal(jobId: string, outputBytes: number, logsBytes: number): TooLargeError | null {
  if (outputBytes > LIMITS.maxOutputBytes) {
    return new TooLargeError(
      `the output of job ${jobId} is ${outputBytes} bytes of JSON; an output may be at most ${LIMITS.maxOutputBytes} bytes (LIMITS.maxOutputBytes), since it is handed to every downstream task. Return less, or store the data elsewhere and return a reference to it.`,
      { jobId, field: 'output', bytes: outputBytes, limitBytes: LIMITS.maxOutputBytes },
    );
  }
  if (outputBytes + logsBytes > LIMITS.maxResultBytes) {
    return new TooLargeError(
      `the result of job ${jobId} (output and logs) is ${outputBytes + logsBytes} bytes; a result may be at most ${LIMITS.maxResultBytes} bytes (LIMITS.maxResultBytes). Log less.`,
      { jobId, bytes: outputBytes + logsBytes, limitBytes: LIMITS.maxResultBytes },
    );
  }
  return null;
}

/**
 * Why a failure is too large to store, or null: its error and logs together over
 * LIMITS.maxResultBytes, the bound every result row keeps. Both stores refuse with this.
 */
export function failureSizeRefusal(jobId: string, errorBytes: number, logsBytes: number): TooLargeError | null {
  if (errorBytes + logsBytes <= LIMITS.maxResultBytes) return null;
  return new TooLargeError(
    `the failure of job ${jobId} (error and logs) is ${errorBytes + logsBytes} bytes; a result may be at most ${LIMITS.maxResultBytes} bytes (LIMITS.maxResultBytes). Log less.`,
    { jobId, bytes: errorBytes + logsBytes, limitBytes: LIMITS.maxResultBytes },
  );
}

/** Refuses an upstream read naming more tasks than a task may depend on, or a task id that is not a string. */
export function checkUpstreamTasks(taskIds: readonly unknown[]): string[] {
  if (!Array.isArray(taskIds) || taskIds.length > LIMITS.maxDependenciesPerTask) {
    throw new InvalidInputError(`an upstream read may name at most ${LIMITS.maxDependenciesPerTask} tasks`, { field: 'taskIds', limit: LIMITS.maxDependenciesPerTask });
  }
  taskIds.forEach((id, i) => {
    // A task id's own rule: this also keeps text the store cannot take out of the statement.
    if (typeof id !== 'string' || id.length > LIMITS.maxIdLength || !NAME_PATTERN.test(id)) {
      throw new InvalidInputError(`taskIds.${i}: a task id ${NAME_CHARACTERS}, at most ${LIMITS.maxIdLength} characters`, { field: `taskIds.${i}` });
    }
  });
  return taskIds as string[];
}

/**
 * Refuses the upstream outputs of one job when together they pass
 * LIMITS.maxUpstreamOutputBytes (each counted as its JSON text), or returns them.
 */
export function checkUpstreamSize<T extends { output: unknown }>(jobId: string, outputs: T[]): T[] {
  let bytes = 0;
  for (const o of outputs) bytes += utf8ByteLength(JSON.stringify(o.output ?? null));
  if (bytes > LIMITS.maxUpstreamOutputBytes) {
    throw new TooLargeError(
      `the upstream outputs of job ${jobId} are ${bytes} bytes of JSON together; a job may be handed at most ${LIMITS.maxUpstreamOutputBytes} bytes (LIMITS.maxUpstreamOutputBytes). Have its upstream tasks return less.`,
      { jobId, field: 'upstream', bytes, limitBytes: LIMITS.maxUpstreamOutputBytes },
    );
  }
  return outputs;
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
