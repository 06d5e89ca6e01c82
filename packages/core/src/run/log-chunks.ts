import { InvalidInputError } from '../errors';
import { clipText, replaceUnstorable } from '../input/free-form';
import { LIMITS } from '../limits';
import type { LogChunksQuery } from '../store/run-reads';

export const LOG_CHUNKS_DEFAULT_LIMIT = 200;
export const LOG_CHUNKS_MAX_LIMIT = 1_000;

/** Checks a read of streamed log lines, so a store never compares against a value it cannot hold. */
export function checkLogChunksQuery(query: LogChunksQuery): void {
  const whole = (value: number, min: number, max: number) => Number.isInteger(value) && value >= min && value <= max;
  if (!whole(query.fence, 0, Number.MAX_SAFE_INTEGER)) throw new InvalidInputError('fence: must be a whole number from 0', { field: 'fence' });
  if (query.afterSeq !== undefined && !whole(query.afterSeq, 0, 2 ** 31 - 1)) throw new InvalidInputError('afterSeq: must be a whole number from 0', { field: 'afterSeq' });
  if (query.limit !== undefined && !whole(query.limit, 1, LOG_CHUNKS_MAX_LIMIT)) {
    throw new InvalidInputError(`limit: must be a whole number from 1 to ${LOG_CHUNKS_MAX_LIMIT}`, { field: 'limit' });
  }
}

/**
 * A renewal's log lines as a store keeps them: at most LIMITS.maxLogChunkChars, with every
 * NUL and lone surrogate replaced, since a text PostgreSQL refuses would fail the shared
 * renewal statement of every worker in it. Log lines are the worker's own words; keeping
 * them a little changed beats losing the renewal.
 */
export function storableLog(text: string): string {
  return replaceUnstorable(clipText(text, LIMITS.maxLogChunkChars));
}
