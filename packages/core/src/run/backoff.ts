import type { TaskSpec } from '../spec';

/**
 * The delay before retrying a task whose attempt number `attempt` (1-based) just failed:
 * min(baseMs * 2^(attempt - 1), maxMs).
 *
 * The SQL store computes the same formula in SQL with the store's clock
 * (docs/architecture.md, rule 2), and the simulator uses this function; the two must
 * agree exactly, so change both or neither.
 */
export function retryBackoffMs(attempt: number, baseMs: number, maxMs: number): number {
  if (!Number.isInteger(attempt) || attempt < 1) {
    throw new Error(`retryBackoffMs: attempt must be an integer >= 1 (the attempt that just failed), got ${attempt}`);
  }
  // A zero base would otherwise meet 2^1024 = Infinity for huge attempts and give NaN.
  if (baseMs <= 0) return 0;
  return Math.min(baseMs * 2 ** (attempt - 1), maxMs);
}

/** Total attempts a task gets: the first one plus its retries. */
export function maxAttemptsOf(task: Pick<TaskSpec, 'retries'>): number {
  return task.retries + 1;
}
