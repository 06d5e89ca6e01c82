import { randomBytes } from 'node:crypto';
import pg from 'pg';
import postgres from 'postgres';
import { createDatabase, dropDatabase } from '@fenceline/db';
import type { Database } from '../src/index';

/** A fresh database of the test run's server, with a postgres.js handle, a pg pool and a connected pg client on it. */
export interface TestDatabase {
  url: string;
  sql: postgres.Sql;
  pool: pg.Pool;
  /** One plain connection: the helpers must run its transactions one at a time. */
  client: pg.Client;
  close(): Promise<void>;
}

export async function testDatabase(): Promise<TestDatabase> {
  const adminUrl = process.env.DATABASE_URL;
  if (!adminUrl) throw new Error('DATABASE_URL is not set: run through vitest, whose global setup starts the server');
  const name = `fenceline_effects_${randomBytes(4).toString('hex')}`;
  const url = await createDatabase(adminUrl, name);
  const sql = postgres(url, { max: 6, onnotice: () => undefined });
  const pool = new pg.Pool({ connectionString: url, max: 6 });
  const client = new pg.Client({ connectionString: url });
  // Dropping the database at close ends any connection still closing with 57P01; an idle
  // connection's error with no listener would fail the whole test file after it passed.
  pool.on('error', () => undefined);
  client.on('error', () => undefined);
  await client.connect();
  return {
    url,
    sql,
    pool,
    client,
    async close() {
      await sql.end({ timeout: 5 });
      await pool.end();
      await client.end();
      await dropDatabase(adminUrl, name);
    },
  };
}

/** Each driver behind one name, so each contract case runs against each. */
export const DRIVERS: { name: string; db: (t: TestDatabase) => Database; run: (t: TestDatabase, text: string, values?: unknown[]) => Promise<Record<string, unknown>[]> }[] = [
  { name: 'postgres.js', db: (t) => t.sql, run: async (t, text, values = []) => [...(await t.sql.unsafe(text, values as never[]))] },
  { name: 'pg Pool', db: (t) => t.pool, run: async (t, text, values = []) => (await t.pool.query(text, values)).rows },
  // The test's own statements go through the pool, so none of them lands inside a helper's open transaction on the client.
  { name: 'pg Client', db: (t) => t.client, run: async (t, text, values = []) => (await t.pool.query(text, values)).rows },
];

/** A job context for effects: the task's identity and a fence. */
export function job(fence: number, taskId = 'pay'): { dagId: string; runId: string; taskId: string; fence: number } {
  return { dagId: 'books', runId: '17', taskId, fence };
}
