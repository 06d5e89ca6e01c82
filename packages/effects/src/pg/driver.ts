import type { Sql, TransactionSql } from 'postgres';
import { EffectInputError } from '../errors';

/** A row as the helpers read it: bigint columns arrive as strings from both drivers. */
export type Row = Record<string, unknown>;

/** The part of a `pg` Client or PoolClient the helpers use. */
export interface PgClientLike {
  query(text: string, values?: unknown[]): Promise<{ rows: Row[] }>;
}

/** The part of a `pg` Pool the helpers use: a pooled client is taken for each transaction. */
export interface PgPoolLike<C extends PgClientLike = PgClientLike> extends PgClientLike {
  connect(): Promise<C & { release(err?: Error | boolean): void }>;
  totalCount: number;
}

/** Either driver: a postgres.js `sql` (not a transaction of it), a `pg` Pool, or a connected `pg` Client. */
export type Database = Sql | PgPoolLike | PgClientLike;

/** One statement at a time, as the helpers write them (with $1-style parameters). */
export interface Conn {
  query(text: string, values: unknown[]): Promise<Row[]>;
}

function isPostgresJs(db: unknown): db is Sql {
  return typeof db === 'function' && typeof (db as Sql).begin === 'function' && typeof (db as Sql).unsafe === 'function';
}

function isPgPool(db: unknown): db is PgPoolLike {
  return typeof db === 'object' && db !== null && typeof (db as PgPoolLike).connect === 'function' && typeof (db as PgPoolLike).totalCount === 'number';
}

function isPgClient(db: unknown): db is PgClientLike {
  return typeof db === 'object' && db !== null && typeof (db as PgClientLike).query === 'function';
}

/** Thrown inside a postgres.js transaction to roll it back without an error reaching the caller. */
class Rollback<R> {
  constructor(readonly value: R) {}
}

/**
 * Runs `body` in one transaction of `db`, handing it a statement runner and the driver's
 * own transaction object (a postgres.js TransactionSql, or the `pg` client the transaction
 * runs on) for the user's writes. `rollback(value)` ends the transaction without a commit.
 */
export async function inTransaction<R>(db: Database, body: (conn: Conn, tx: unknown, rollback: (value: R) => never) => Promise<R>): Promise<R> {
  const rollback = (value: R): never => {
    throw new Rollback(value);
  };
  if (isPostgresJs(db)) {
    try {
      return (await db.begin((tx: TransactionSql) => body({ query: (text, values) => tx.unsafe(text, values as never[]) as unknown as Promise<Row[]> }, tx, rollback))) as R;
    } catch (err) {
      if (err instanceof Rollback) return err.value as R;
      throw err;
    }
  }
  if (isPgPool(db)) {
    const client = await db.connect();
    let broken: Error | undefined;
    try {
      return await onPgClient(client, body, rollback);
    } catch (err) {
      // A client whose connection failed mid-transaction is not put back in the pool.
      broken = err instanceof Error ? err : new Error(String(err));
      throw err;
    } finally {
      client.release(broken);
    }
  }
  if (isPgClient(db)) return oneAtATime(db, () => onPgClient(db, body, rollback));
  throw new EffectInputError('db', 'must be a postgres.js sql, a pg Pool or a connected pg Client');
}

/** The transaction last started on each plain client, so the next one waits for it. */
const clientQueues = new WeakMap<object, Promise<unknown>>();

/**
 * Runs the transactions of one plain `pg` client one after another. A client is one
 * connection: a second `begin` sent while a transaction is open would join it, and two
 * effects would commit or roll back together, their fence checks mixed.
 */
function oneAtATime<R>(client: object, run: () => Promise<R>): Promise<R> {
  const before = clientQueues.get(client) ?? Promise.resolve();
  const mine = before.then(run, run);
  clientQueues.set(
    client,
    mine.catch(() => undefined),
  );
  return mine;
}

async function onPgClient<R>(client: PgClientLike, body: (conn: Conn, tx: unknown, rollback: (value: R) => never) => Promise<R>, rollback: (value: R) => never): Promise<R> {
  const conn: Conn = { query: async (text, values) => (await client.query(text, values)).rows };
  await client.query('begin');
  let value: R;
  try {
    value = await body(conn, client, rollback);
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    if (err instanceof Rollback) return err.value as R;
    throw err;
  }
  await client.query('commit');
  return value;
}

/** One statement outside a transaction. */
export async function queryOnce(db: Database, text: string, values: unknown[]): Promise<Row[]> {
  if (isPostgresJs(db)) return (await db.unsafe(text, values as never[])) as unknown as Row[];
  if (isPgClient(db)) return (await db.query(text, values)).rows;
  throw new EffectInputError('db', 'must be a postgres.js sql, a pg Pool or a connected pg Client');
}

/** A bigint column as a number (fences stay far below 2^53). */
export function num(value: unknown): number {
  return typeof value === 'number' ? value : Number(value);
}
