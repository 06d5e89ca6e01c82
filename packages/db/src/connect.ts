import { connect } from './client';
import { drizzle } from 'drizzle-orm/postgres-js';
import { schema } from './schema/index';
import { migrateDatabase } from './migrate';
import { sqlStore, type SqlStore } from './store/sql-store';
import { resolveDatabaseUrl } from './embedded';
import type { Durability } from './store/durability';

export interface OpenStoreOptions {
  /** Defaults to resolveDatabaseUrl(): DATABASE_URL, or the embedded server. */
  databaseUrl?: string;
  /** Pool size; default 10. */
  max?: number;
  /** Shown in pg_stat_activity, so an operator can tell the scheduler from the console. */
  applicationName?: string;
  /** The process's environment, for the connection settings below (tests pass their own). */
  env?: NodeJS.ProcessEnv;
}

/** The deadlines every store connection is opened with (docs/configuration.md). */
export interface ConnectionDeadlines {
  /** How long opening a connection (TCP, start-up, the primary check) may take. */
  connectTimeoutMs: number;
  /** The server cancels a statement that runs longer (PostgreSQL's statement_timeout); 0 turns it off. */
  statementTimeoutMs: number;
}

export const DEFAULT_CONNECTION_DEADLINES: ConnectionDeadlines = { connectTimeoutMs: 10_000, statementTimeoutMs: 60_000 };

/** Reads FENCELINE_DB_CONNECT_TIMEOUT_MS and FENCELINE_DB_STATEMENT_TIMEOUT_MS, refusing a value that is not a whole number. */
export function connectionDeadlines(env: NodeJS.ProcessEnv = process.env): ConnectionDeadlines {
  const read = (name: string, fallback: number, min: number): number => {
    const raw = env[name];
    if (raw == null || raw === '') return fallback;
    const n = Number(raw);
    if (!/^\s*\d+\s*$/.test(raw) || !Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be a whole number of at least ${min}, got "${raw}"`);
    return n;
  };
  return {
    connectTimeoutMs: read('FENCELINE_DB_CONNECT_TIMEOUT_MS', DEFAULT_CONNECTION_DEADLINES.connectTimeoutMs, 1000),
    statementTimeoutMs: read('FENCELINE_DB_STATEMENT_TIMEOUT_MS', DEFAULT_CONNECTION_DEADLINES.statementTimeoutMs, 0),
  };
}

/**
 * Reads FENCELINE_DB_SYNC_STANDBY: `required` makes the store accept a result only from a
 * server that commits it with a synchronous standby, `off` from any primary. Unset, it is
 * `required` for a URL naming more than one host (a highly available store, where a
 * primary without its standby acknowledges commits a failover can lose) and `off` for one
 * host (a single server has no standby to wait for).
 */
export function durabilityOf(url: string, env: NodeJS.ProcessEnv = process.env): Durability {
  const raw = env.FENCELINE_DB_SYNC_STANDBY;
  if (raw == null || raw === '') return { requireSyncStandby: hostCount(url) > 1 };
  if (raw === 'required' || raw === 'off') return { requireSyncStandby: raw === 'required' };
  throw new Error(`FENCELINE_DB_SYNC_STANDBY must be "required" or "off", got "${raw}"`);
}

/** How many hosts a URL's host list names (`postgres://h1:5432,h2:5432/db` names two). */
function hostCount(url: string): number {
  const hosts = /^postgres(?:ql)?:\/\/(?:[^@/?#]*@)?([^/?#]*)/.exec(url)?.[1] ?? '';
  return hosts.split(',').filter((h) => h !== '').length;
}

/**
 * TCP keepalive probes start after a connection has been silent this long, so a server
 * that vanished without closing its sockets (its machine lost) is noticed by the kernel.
 */
const KEEPALIVE_S = 10;

/**
 * Opens a store: migrates the database (safe when many processes start at once), then
 * connects a postgres.js pool through drizzle. Sessions run in UTC so timestamps come back
 * with a zero offset, and `idle_in_transaction_session_timeout` bounds how long a stuck
 * client could hold a lease row or a shard lock. Every connection has deadlines: opening
 * one gives up after the connect timeout (and tries the next host of a multi-host URL),
 * the server cancels a statement past the statement timeout, and keepalive probes find a
 * server that is gone. A caller that must not wait on a connection whose server vanished
 * without a word (a scheduler node) adds its own deadline per call and calls reconnect().
 */
export async function openStore(opts: OpenStoreOptions = {}): Promise<SqlStore> {
  const databaseUrl = opts.databaseUrl ?? (await resolveDatabaseUrl());
  const deadlines = connectionDeadlines(opts.env);
  const durability = durabilityOf(databaseUrl, opts.env);
  await migrateDatabase(databaseUrl);
  const open = () =>
    drizzle(
      connect(databaseUrl, {
        max: opts.max ?? 10,
        connect_timeout: Math.ceil(deadlines.connectTimeoutMs / 1000),
        keep_alive: KEEPALIVE_S,
        connection: {
          application_name: opts.applicationName ?? 'fenceline',
          TimeZone: 'UTC',
          idle_in_transaction_session_timeout: 30_000,
          statement_timeout: deadlines.statementTimeoutMs,
        },
      }),
      { schema },
    );
  return sqlStore(open(), open, durability);
}
