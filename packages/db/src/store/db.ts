import type { PostgresJsDatabase } from 'drizzle-orm/postgres-js';
import { sql, type SQL } from 'drizzle-orm';
import type { Sql } from 'postgres';
import type { schema } from '../schema/index';

/** The drizzle handle every store function takes, with the postgres.js client under it (for LISTEN). */
export type Db = PostgresJsDatabase<typeof schema> & { $client: Sql };
export type Tx = Parameters<Parameters<Db['transaction']>[0]>[0];
export type Executor = Db | Tx;

/** A raw result row: column name to driver value (strings for bigints and timestamps). */
export type RawRow = Record<string, unknown>;

/** Runs one statement and returns its rows. */
export async function rows(db: Executor, query: SQL): Promise<RawRow[]> {
  const result = await db.execute(query);
  return result as unknown as RawRow[];
}

/** Runs one statement and returns its first row, if any. */
export async function firstRow(db: Executor, query: SQL): Promise<RawRow | undefined> {
  return (await rows(db, query))[0];
}

/** A whole-milliseconds interval, so TTLs and backoffs are added to the store's clock. */
export function msInterval(ms: number): SQL {
  return sql`(${ms}::float8 * interval '1 millisecond')`;
}

/**
 * A Date as a timestamptz parameter. The drizzle postgres.js binding passes timestamps
 * through untouched, so dates go over the wire as ISO strings and are cast in SQL.
 */
export function ts(date: Date): SQL {
  return sql`${date.toISOString()}::timestamptz`;
}

/** A JSON value as a jsonb parameter (the binding sends json parameters as text as-is). */
export function jsonb(value: unknown): SQL {
  return sql`${JSON.stringify(value ?? null)}::jsonb`;
}

/**
 * A JS array as one array parameter (drizzle would otherwise expand it into a list).
 * Timestamp arrays are sent as text[] and cast in SQL, because the drizzle binding
 * disables postgres.js's serializers for timestamp types, arrays included.
 */
export function array(values: readonly unknown[], type: 'bigint' | 'text' | 'int' | 'timestamptz'): SQL {
  if (type === 'timestamptz') return sql`${sql.param(values)}::text[]::timestamptz[]`;
  return sql`${sql.param(values)}::${sql.raw(type)}[]`;
}
