import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import postgres from 'postgres';
import { drizzle } from 'drizzle-orm/postgres-js';
import { parseJobId, InvalidInputError, isStoreUnavailable, StoreUnavailableError } from '@fenceline/core';
import { terminateBackends } from '../src/audit';
import { openStore, type SqlStore } from '../src/index';
import { schema } from '../src/schema/index';
import { sqlStore } from '../src/store/sql-store';
import { isLostConnection, isStandbyAnswer } from '../src/store/unavailable';
import { freshDatabase } from './harness';

/**
 * The SQL store reports a database it cannot reach, or a connection lost under a
 * statement, as core's StoreUnavailableError, and every other error as it was: the
 * scheduling logic waits out the first and must see the second.
 */
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let database: { url: string; drop(): Promise<void> };
let store: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  store = await openStore({ databaseUrl: database.url, max: 2, applicationName: 'fenceline-test' });
  await store.initCluster(2);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

/** Polls until the check holds, for at most 20 s. */
async function waitFor(check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('timed out waiting for the takeover to wait on the lock');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('the SQL store on a database out of reach', () => {
  it('rejects with StoreUnavailableError when nothing listens at the address', async () => {
    // Port 1 is privileged and unused: the connection is refused at once.
    const client = postgres('postgres://postgres@127.0.0.1:1/postgres', { max: 1, onnotice: () => {}, connect_timeout: 5 });
    const away = sqlStore(drizzle(client, { schema }));
    try {
      const err = await away.getJobs([parseJobId('1')]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(StoreUnavailableError);
      expect((err as Error).message).toBe('the database is unavailable (ECONNREFUSED)');
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('rejects a statement whose connection is cut under it with StoreUnavailableError, then serves the next one', async () => {
    // Another session holds the shard row, so the takeover waits on it until its
    // connection is cut by the server.
    expect(await store.acquireShard({ shard: 1, nodeId: 'node-x', ttlMs: 60_000 })).not.toBeNull();
    const holder = postgres(database.url, { max: 1, onnotice: () => {} });
    const watcher = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      // Each step waits for the one before it to have happened, not for a fixed time:
      // on a loaded machine a statement can take longer than any pause to be sent. The
      // holder's connection is reserved and sends nothing after its lock, so nothing of it
      // is still being written when the server cuts it.
      const reserved = await holder.reserve();
      await reserved`begin`;
      await reserved`select shard from shard_leases where shard = 1 for update`;
      const waiting = store.acquireShard({ shard: 1, nodeId: 'node-a', ttlMs: 60_000 }).catch((e: unknown) => e);
      await waitFor(async () => {
        const [row] = await watcher<{ n: number }[]>`
          select count(*)::int as n from pg_stat_activity
          where datname = current_database() and wait_event_type = 'Lock'`;
        return (row?.n ?? 0) > 0;
      });
      expect(await terminateBackends(adminUrl, database.url.slice(database.url.lastIndexOf('/') + 1))).toBeGreaterThan(0);
      const err = await waiting;
      expect(isStoreUnavailable(err), String(err)).toBe(true);
    } finally {
      await watcher.end({ timeout: 1 });
      await holder.end({ timeout: 1 });
    }
    // postgres.js reconnects by itself: the store works again without being reopened.
    expect(await store.getJobs([])).toEqual([]);
  });

  it('replaces a pool whose connections reached a standby, so the next writes land on the primary', async () => {
    // The first pool's sessions refuse writes as a standby does (25006); the pool the store
    // opens again is an ordinary one, as a multi-host URL's would reach the new primary.
    const standby = postgres(database.url, { max: 2, onnotice: () => {}, connection: { default_transaction_read_only: true } });
    const primaries: ReturnType<typeof postgres>[] = [];
    const stuck = sqlStore(drizzle(standby, { schema }), () => {
      const client = postgres(database.url, { max: 2, onnotice: () => {} });
      primaries.push(client);
      return drizzle(client, { schema });
    });
    try {
      const first = await stuck.acquireShard({ shard: 0, nodeId: 'node-standby', ttlMs: 60_000 }).catch((e: unknown) => e);
      expect(first).toBeInstanceOf(StoreUnavailableError);
      expect((first as Error).message).toBe('the database is unavailable (25006)');
      // The refusal replaced the pool: a write soon lands, where the old pool refused every one.
      await waitFor(async () => (await stuck.acquireShard({ shard: 0, nodeId: 'node-standby', ttlMs: 60_000 }).catch(() => null)) !== null);
      expect(primaries.length).toBe(1);
    } finally {
      await stuck.db.$client.end({ timeout: 1 }).catch(() => undefined);
      await standby.end({ timeout: 1 }).catch(() => undefined);
      for (const p of primaries) await p.end({ timeout: 1 }).catch(() => undefined);
    }
  });

  it('takes a server in recovery for a standby, as the lineage check meets it after a failover', async () => {
    const client = postgres(database.url, { max: 1, onnotice: () => {} });
    try {
      // What PostgreSQL answers pg_current_wal_lsn() with on a node in recovery.
      const recovery = await client`do $$ begin raise exception 'recovery is in progress' using errcode = '55000'; end $$`.catch((e: unknown) => e);
      const other = await client`do $$ begin raise exception 'some other prerequisite' using errcode = '55000'; end $$`.catch((e: unknown) => e);
      expect(isStandbyAnswer(recovery)).toBe(true);
      expect(isLostConnection(recovery)).toBe(true);
      expect(isStandbyAnswer(other)).toBe(false);
      expect(isLostConnection(other)).toBe(false);
    } finally {
      await client.end({ timeout: 1 });
    }
  });

  it('leaves a refusal of bad input as it was', async () => {
    const ids = Array.from({ length: 10_001 }, (_, i) => parseJobId(String(i + 1)));
    const err = await store.getJobs(ids).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(InvalidInputError);
    expect(isStoreUnavailable(err)).toBe(false);
  });
});

describe('isLostConnection', () => {
  it('knows driver codes, connection SQLSTATEs and a wrapped cause, and nothing else', () => {
    const coded = (code: string): Error => Object.assign(new Error(code), { code });
    expect(isLostConnection(coded('CONNECTION_CLOSED'))).toBe(true);
    expect(isLostConnection(coded('08006'))).toBe(true);
    expect(isLostConnection(coded('57P01'))).toBe(true);
    expect(isLostConnection(new Error('query failed', { cause: coded('ECONNRESET') }))).toBe(true);
    expect(isLostConnection(coded('23505'))).toBe(false);
    expect(isLostConnection(coded('42P01'))).toBe(false);
    expect(isLostConnection(new TypeError('x is undefined'))).toBe(false);
    expect(isLostConnection('CONNECTION_CLOSED')).toBe(false);
  });
});
