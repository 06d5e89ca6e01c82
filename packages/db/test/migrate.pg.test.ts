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
