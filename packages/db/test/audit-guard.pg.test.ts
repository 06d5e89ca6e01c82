import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore, type SqlStore } from '../src/index';
import { freshDatabase } from './harness';

const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let database: { url: string; drop(): Promise<void> };
let store: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  store = await openStore({ databaseUrl: database.url, max: 2, applicationName: 'audit-guard-test' });
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

describe('the audit log in PostgreSQL', () => {
  it('refuses UPDATE, DELETE and TRUNCATE even in plain SQL, and keeps the entry as written', async () => {
    const entry = await store.appendAudit({ actorKind: 'user', actor: 'alice', action: 'dag.triggered', dagId: 'nightly', source: '10.0.0.1' });
    const sql = store.db.$client;
    await expect(sql`update audit_log set actor = 'mallory' where id = ${entry.id}`).rejects.toThrow(/append-only/);
    await expect(sql`delete from audit_log where id = ${entry.id}`).rejects.toThrow(/append-only/);
    await expect(sql`truncate audit_log`).rejects.toThrow(/append-only/);
    expect(await store.listAudit({ actor: 'alice' })).toEqual([entry]);
  });

  it('keeps the guard when the store is opened again (the migrate step is idempotent)', async () => {
    const again = await openStore({ databaseUrl: database.url, max: 1, applicationName: 'audit-guard-again' });
    try {
      await expect(again.db.$client`delete from audit_log`).rejects.toThrow(/append-only/);
    } finally {
      await again.close();
    }
  });
});
