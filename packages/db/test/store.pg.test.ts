import { afterAll, beforeAll } from 'vitest';
import { storeContract } from '@fenceline/core/testing';
import { freshDatabase, sqlHarness } from './harness';

// The machine's PostgreSQL (DATABASE_URL, else the local default), in a database of its own.
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let database: { url: string; drop(): Promise<void> };

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
});
afterAll(async () => {
  await database?.drop();
});

storeContract('PostgreSQL', () => sqlHarness(database.url));
