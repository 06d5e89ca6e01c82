import { randomBytes } from 'node:crypto';
import type { StoreHarness } from '@fenceline/core/testing';
import { createDatabase, dropDatabase, openStore } from '../src/index';

/**
 * A fresh database for one test file, so files can run in parallel and every CI run
 * starts from nothing. Each test opens its own store on it (running the migrations is a
 * no-op after the first) and closes it after.
 */
export async function freshDatabase(adminUrl: string): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `fenceline_test_${randomBytes(6).toString('hex')}`;
  const url = await createDatabase(adminUrl, name);
  return { url, drop: () => dropDatabase(adminUrl, name) };
}

/** The SQL binding of the contract's harness: store time is PostgreSQL's, so advancing it means waiting. */
export async function sqlHarness(databaseUrl: string): Promise<StoreHarness> {
  const store = await openStore({ databaseUrl, max: 20, applicationName: 'fenceline-test' });
  return {
    store,
    advanceMs: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
    teardown: () => store.close(),
  };
}
