/**
 * The store could not be reached, or the answer to a call was lost: the connection was
 * refused, dropped or timed out, or the server is shutting down or not yet accepting
 * sessions. Unlike a refusal (a FencelineError) it says nothing about the data: a write
 * may or may not have landed, and the same call may succeed once the store is back. Each
 * store maps its own signs of this to this one class (the SQL store its driver's
 * connection errors, the simulator's store a cut or slow link), so the scheduling logic
 * can wait out an outage and still let every other error, a bug above all, surface.
 */
export class StoreUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'StoreUnavailableError';
  }
}

export function isStoreUnavailable(err: unknown): err is StoreUnavailableError {
  return err instanceof StoreUnavailableError;
}

/**
 * A `.catch` handler for a call whose loss a later pass repairs (reconciliation re-reads,
 * the next tick retries): it yields `fallback` when the store is away and rethrows
 * anything else.
 */
export function unlessUnavailable<T>(fallback: T): (err: unknown) => T {
  return (err) => {
    if (isStoreUnavailable(err)) return fallback;
    throw err;
  };
}
