import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index';
import { freshDatabase } from './harness';

const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
});
afterAll(async () => {
  await database?.drop();
});

describe('migrations', () => {
  it('are applied once when several processes open the store at the same moment', async () => {
    const stores = await Promise.all(Array.from({ length: 6 }, (_, i) => openStore({ databaseUrl: database.url, max: 2, applicationName: `opener-${i}` })));
    try {
      const applied = await stores[0]!.db.$client`select count(*)::int as n from drizzle.__drizzle_migrations`;
      const journal = (await import('../migrations/meta/_journal.json', { with: { type: 'json' } })).default as { entries: unknown[] };
      expect(applied[0]!.n).toBe(journal.entries.length);
      expect(await stores[5]!.initCluster(8)).toEqual({ shardCount: 8 });
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
  });
});

describe('the version a DAG head names', () => {
  it('must be stored: a head pointing at a missing version is refused at commit, and nothing is written', async () => {
    const store = await openStore({ databaseUrl: database.url, max: 2, applicationName: 'version-key' });
    try {
      const sql = store.db.$client;
      // Outside a transaction the statement is its own transaction, so the deferred check runs at its end.
      await expect(sql`insert into dags (id, shard, current_version) values ('pinned', 0, 1)`).rejects.toThrow(/dags_current_version_fk/);
      expect(await sql`select id from dags where id = 'pinned'`).toHaveLength(0);
      await sql.begin(async (tx) => {
        await tx`insert into dags (id, shard, current_version) values ('pinned', 0, 1)`;
        await tx`insert into dag_versions (dag_id, version, spec) values ('pinned', 1, '{}'::jsonb)`;
      });
      const moved = sql`update dags set current_version = 2 where id = 'pinned'`;
      await expect(moved).rejects.toThrow(/dags_current_version_fk/);
      const [head] = await sql`select current_version from dags where id = 'pinned'`;
      expect(head!.current_version).toBe(1);
    } finally {
      await store.close();
    }
  });
});
