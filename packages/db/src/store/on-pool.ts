import type { Db } from './db';
import { isStandbyAnswer, storeErrorOf } from './unavailable';

/**
 * A role's operations as the SQL functions that do them: each takes the pool first, then
 * the operation's own arguments. A role object of this type lists which function does
 * each operation, and the compiler checks each against the role's interface.
 */
export type OverPool<R> = { [K in keyof R]: R[K] extends (...args: infer A) => infer T ? (db: Db, ...args: A) => T : never };

/** The pool the store's statements run on now (reconnect replaces it), and who to tell when a standby answered. */
export interface PoolHolder {
  readonly db: Db;
  standbyAnswered(): void;
}

/**
 * The function with its rejections mapped by storeErrorOf, so no operation of the store can
 * forget it: a lost connection reaches the scheduling logic as core's StoreUnavailableError,
 * whichever operation met it, so the logic can tell an outage it waits out from a bug it
 * must report. A refusal thrown before the first statement (bad input) is thrown as it
 * was. A standby's answer is also told to the pool's holder, so it can replace connections
 * that would otherwise stay on the wrong node.
 */
export function guarded<A extends unknown[], T>(pool: PoolHolder, fn: (...args: A) => T): (...args: A) => T {
  return (...args) => {
    const result = fn(...args);
    if (!(result instanceof Promise)) return result;
    return result.catch((err: unknown) => {
      if (isStandbyAnswer(err)) pool.standbyAnswered();
      throw storeErrorOf(err);
    }) as T;
  };
}

/**
 * The operations of `parts` as the role's interface declares them: each runs its function
 * on the pool current at the call (so a reconnect takes effect at once), guarded.
 */
export function onPool<R>(pool: PoolHolder, parts: OverPool<R>): R {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(parts as Record<string, (db: Db, ...args: unknown[]) => unknown>)) {
    out[name] = guarded(pool, (...args: unknown[]) => fn(pool.db, ...args));
  }
  return out as R;
}
