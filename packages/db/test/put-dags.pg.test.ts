import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { parseDagId, InvalidDagError, NotFoundError, type DagSpecInput } from '@fenceline/core';
import { openStore, type SqlStore } from '../src/index';
import { freshDatabase } from './harness';

/**
 * Several specs stored all or none. The failure inside the transaction is forced with a
 * trigger, because every spec that passes validation also writes cleanly: without one the
 * rollback path could not be reached from outside.
 */
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SHARDS = 4;
let database: { url: string; drop(): Promise<void> };
let store: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  store = await openStore({ databaseUrl: database.url, max: 4, applicationName: 'fenceline-test' });
  await store.initCluster(SHARDS);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

function spec(id: string, task = 'only'): DagSpecInput {
  return { id, tasks: [{ id: task, type: 'noop' }] };
}

async function exists(dagId: string): Promise<boolean> {
  try {
    await store.getDag(parseDagId(dagId));
    return true;
  } catch (err) {
    if (err instanceof NotFoundError) return false;
    throw err;
  }
}

describe('putDags', () => {
  it('stores every spec and answers in input order', async () => {
    const results = await store.putDags([spec('batch-b'), spec('batch-a'), spec('batch-c')], SHARDS);
    expect(results).toEqual([
      { dagId: 'batch-b', version: 1, created: true },
      { dagId: 'batch-a', version: 1, created: true },
      { dagId: 'batch-c', version: 1, created: true },
    ]);
    const again = await store.putDags([spec('batch-a'), spec('batch-b', 'changed')], SHARDS);
    expect(again).toEqual([
      { dagId: 'batch-a', version: 1, created: false },
      { dagId: 'batch-b', version: 2, created: true },
    ]);
  });

  it('stores nothing when one spec is invalid', async () => {
    const bad = { id: 'invalid-one', tasks: [] };
    await expect(store.putDags([spec('before-invalid'), bad], SHARDS)).rejects.toBeInstanceOf(InvalidDagError);
    expect(await exists('before-invalid')).toBe(false);
  });

  it('rolls back the specs already written when a later write fails', async () => {
    await store.db.execute(sql`
      create function refuse_poison() returns trigger language plpgsql as $$
      begin
        if new.dag_id = 'poison' then raise exception 'refused by the test trigger'; end if;
        return new;
      end $$`);
    await store.db.execute(sql`create trigger refuse_poison before insert on dag_versions for each row execute function refuse_poison()`);
    try {
      // 'first' and 'middle' sort before 'poison', so they are written before it fails.
      const failed = await store.putDags([spec('first'), spec('poison'), spec('middle')], SHARDS).then(
        () => null,
        (err: unknown) => err,
      );
      expect((failed as { cause?: Error } | null)?.cause?.message).toBe('refused by the test trigger');
      expect(await exists('first')).toBe(false);
      expect(await exists('middle')).toBe(false);
      expect(await exists('poison')).toBe(false);
    } finally {
      await store.db.execute(sql`drop trigger refuse_poison on dag_versions`);
      await store.db.execute(sql`drop function refuse_poison()`);
    }
  });
});
