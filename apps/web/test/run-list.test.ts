import { randomBytes } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
process.env.DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
const { appRouter } = await import('../src/server/routers/app');
const { consoleStore } = await import('../src/server/store');
const { contextAs } = await import('./support/contexts');

const viewer = appRouter.createCaller(contextAs('viewer'));

async function refusal(call: Promise<unknown>): Promise<{ code: string; message: string }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof TRPCError)) throw err;
    return { code: err.code, message: err.message };
  }
  throw new Error('the call was answered');
}

describe('console: the runs list', () => {
  let store: SqlStore;
  const runIds: string[] = [];
  beforeAll(async () => {
    store = await openStore({ databaseUrl: process.env.DATABASE_URL!, max: 2 });
    await store.initCluster(4);
    await store.putDag({ id: 'listed', tasks: [{ id: 'one', type: 'noop' }] }, 4);
    await store.putDag({ id: 'other', tasks: [{ id: 'one', type: 'noop' }] }, 4);
    // Queued only: no scheduler runs here.
    for (let i = 0; i < 3; i++) runIds.push((await store.triggerRun('listed')).id);
    await store.triggerRun('other');
  });
  afterAll(async () => {
    await store?.close();
    await (await consoleStore()).close();
    await dropDatabase(ADMIN_URL, DB_NAME);
  });

  it('pages a DAG’s runs by the URL’s filters and cursor, to a viewer', async () => {
    const first = await viewer.runs.list({ dag: 'listed', state: 'queued', trigger: 'manual', from: '2000-01-01T00:00:00Z', limit: '2' });
    expect(first.rows.map((r) => r.id)).toEqual([runIds[2], runIds[1]]);
    expect(first.previous).toBeNull();
    const second = await viewer.runs.list({ dag: 'listed', state: 'queued', trigger: 'manual', from: '2000-01-01T00:00:00Z', limit: '2', cursor: first.next! });
    expect(second.rows.map((r) => r.id)).toEqual([runIds[0]]);
    expect(second.next).toBeNull();
    // Empty parameters are no filter; oldest first reverses the order.
    expect((await viewer.runs.list({ dag: '', state: '', order: 'oldest' })).rows.map((r) => r.dagId)).toEqual(['listed', 'listed', 'listed', 'other']);
    expect((await viewer.runs.list({ trigger: 'backfill' })).rows).toEqual([]);
    expect((await viewer.runs.list({ to: '2000-01-01T00:00:00Z' })).rows).toEqual([]);
  });

  it('refuses a parameter that is not a value of its filter, naming it', async () => {
    for (const [input, field] of [
      [{ dag: 'a/b' }, 'dag'],
      [{ state: 'done' }, 'state'],
      [{ trigger: 'sometimes' }, 'trigger'],
      [{ from: 'yesterday' }, 'from'],
      [{ to: '2026-13-45T99:00:00Z' }, 'to'],
      [{ order: 'sideways' }, 'order'],
      [{ cursor: 'not-a-cursor' }, 'cursor'],
      [{ limit: 'ten' }, 'limit'],
      [{ limit: '0' }, 'limit'],
      [{ limit: '501' }, 'limit'],
    ] as const) {
      const refused = await refusal(viewer.runs.list(input));
      expect(refused.code, field).toBe('BAD_REQUEST');
      expect(refused.message, field).toContain(`${field}:`);
      expect(refused.message).not.toMatch(/select|runs\.|at .*\.ts/);
    }
  });
});
