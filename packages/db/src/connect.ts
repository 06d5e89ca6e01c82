import { connect } from './client';
import { drizzle } from 'drizzle-orm/postgres-js';
import { schema } from './schema/index';
import { migrateDatabase } from './migrate';
import { SqlStore } from './store/sql-store';
import { resolveDatabaseUrl } from './embedded';

export interface OpenStoreOptions {
  /** Defaults to resolveDatabaseUrl(): DATABASE_URL, or the embedded server. */
  databaseUrl?: string;
  /** Pool size; default 10. */
  max?: number;
  /** Shown in pg_stat_activity, so an operator can tell the scheduler from the console. */
  applicationName?: string;
}

/**
 * Opens a store: migrates the database (safe when many processes start at once), then
 * connects a postgres.js pool through drizzle. Sessions run in UTC so timestamps come back
 * with a zero offset, and `idle_in_transaction_session_timeout` bounds how long a stuck
 * client could hold a lease row or a shard lock.
 */
export async function openStore(opts: OpenStoreOptions = {}): Promise<SqlStore> {
  const databaseUrl = opts.databaseUrl ?? (await resolveDatabaseUrl());
  await migrateDatabase(databaseUrl);
  const client = connect(databaseUrl, {
    max: opts.max ?? 10,
    connection: {
      application_name: opts.applicationName ?? 'fenceline',
      TimeZone: 'UTC',
      idle_in_transaction_session_timeout: 30_000,
    },
  });
  return new SqlStore(drizzle(client, { schema }));
}
