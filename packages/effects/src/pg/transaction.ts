import type { Sql, TransactionSql } from 'postgres';
import { report, resolveEffect, type EffectContext, type EffectOptions } from '../context';
import { decide, type RecordedFence } from '../decide';
import { inTransaction, num, type Database, type PgClientLike, type PgPoolLike } from './driver';
import { claimStatement, DEFAULT_LEDGER_TABLE, ensureLedger, recordStatement } from './ledger';

export interface FencedTransactionOptions extends EffectOptions {
  /** The ledger table (created on first use); default `fenceline_effects`. */
  table?: string;
}

/** What a fenced transaction did: the callback's value only when the effect was applied now. */
export type FencedResult<T> =
  | { outcome: 'applied'; key: string; fence: number; value: T }
  | { outcome: 'already-applied'; key: string; fence: number; appliedFence: number }
  | { outcome: 'stale'; key: string; fence: number; highestFence: number };

/**
 * Runs the job's writes in one transaction that first takes the effect key's row in the
 * ledger. A fence lower than the highest recorded is refused before `fn` runs and nothing
 * is written; in once mode (the default) a key whose effect an earlier attempt applied is
 * not applied again; otherwise `fn` runs and the ledger records this fence in the same
 * transaction, so the whole effect lands under the current fence or none of it does.
 *
 * `fn` receives the driver's transaction: a postgres.js TransactionSql, or the `pg` client
 * the transaction runs on. Every write of the effect must go through it. An error thrown
 * by `fn` rolls everything back and is thrown again.
 */
export function fencedTransaction<T>(db: Sql, ctx: EffectContext, fn: (tx: TransactionSql) => Promise<T>, options?: FencedTransactionOptions): Promise<FencedResult<T>>;
export function fencedTransaction<T, C extends PgClientLike>(
  db: PgPoolLike<C> | C,
  ctx: EffectContext,
  fn: (client: C) => Promise<T>,
  options?: FencedTransactionOptions,
): Promise<FencedResult<T>>;
export async function fencedTransaction<T>(db: Database, ctx: EffectContext, fn: (tx: never) => Promise<T>, options: FencedTransactionOptions = {}): Promise<FencedResult<T>> {
  const { key, fence, mode } = resolveEffect(ctx, options);
  const table = await ensureLedger(db, options.table ?? DEFAULT_LEDGER_TABLE);
  const result = await inTransaction<FencedResult<T>>(db, async (conn, tx, rollback) => {
    const [row] = await conn.query(claimStatement(table), [key, fence]);
    const recorded: RecordedFence = { fence: num(row!.fence), appliedFence: row!.applied_fence == null ? null : num(row!.applied_fence) };
    // A new key's row was inserted under this fence and has no applied fence: it applies.
    const outcome = decide(recorded, fence, mode);
    if (outcome === 'stale') return rollback({ outcome, key, fence, highestFence: recorded.fence });
    if (outcome === 'already-applied') {
      await conn.query(recordStatement(table), [key, fence, false]);
      return { outcome, key, fence, appliedFence: recorded.appliedFence! };
    }
    const value = await fn(tx as never);
    await conn.query(recordStatement(table), [key, fence, true]);
    return { outcome, key, fence, value };
  });
  report(ctx, {
    key,
    sink: 'postgres',
    outcome: result.outcome,
    fence,
    ...(result.outcome === 'stale' ? { recordedFence: result.highestFence } : result.outcome === 'already-applied' ? { recordedFence: result.appliedFence } : {}),
  });
  return result;
}
