import { randomBytes } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_SEQUENCE_ID } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
process.env.DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
const { appRouter } = await import('../src/server/routers/app');
const { consoleStore } = await import('../src/server/store');
const { contextAs } = await import('./support/contexts');

const caller = appRouter.createCaller(contextAs('operator'));
const OUT_OF_RANGE = `must be a numeric id from 1 to ${MAX_SEQUENCE_ID}`;

/** The tRPC code of a refusal and what it says: the zod issues as "path: message", or the message. */
async function refusal(call: Promise<unknown>): Promise<{ code: string; said: string }> {
  try {
    await call;
  } catch (err) {
    if (!(err instanceof TRPCError)) throw err;
    const issues = (err.cause as { issues?: { path: PropertyKey[]; message: string }[] } | undefined)?.issues;
    return { code: err.code, said: issues ? issues.map((i) => `${i.path.map(String).join('.')}: ${i.message}`).join('; ') : err.message };
  }
  throw new Error('the call was answered');
}

describe('console: ids in input', () => {
  let store: SqlStore;
  let runId: string;
  beforeAll(async () => {
    store = await openStore({ databaseUrl: process.env.DATABASE_URL!, max: 2 });
    await store.initCluster(4);
    await store.putDag({ id: 'ids', tasks: [{ id: 'one', type: 'noop' }] }, 4);
    // Queued only: no scheduler runs here, so the run has no jobs and no job has a result.
    const run = await store.triggerRun('ids');
    runId = run.id;
  });
  afterAll(async () => {
    await store?.close();
    await (await consoleStore()).close();
    await dropDatabase(ADMIN_URL, DB_NAME);
  });

  it('refuses a job id that no bigint sequence gives, naming the field; takes the largest bigint', async () => {
    expect(await refusal(caller.runs.result({ jobId: 'abc' }))).toEqual({ code: 'BAD_REQUEST', said: 'jobId: must be a numeric id' });
    for (const bad of ['0', '01', '1'.repeat(20), '9223372036854775808']) {
      expect(await refusal(caller.runs.result({ jobId: bad })), bad).toEqual({ code: 'BAD_REQUEST', said: `jobId: ${OUT_OF_RANGE}` });
    }
    expect(await caller.runs.result({ jobId: MAX_SEQUENCE_ID })).toBeNull();
  });

  it('answers a run id from the URL that cannot be a run NOT_FOUND, naming the field, and never reads it', async () => {
    expect(await refusal(caller.runs.timeline({ runId: 'abc' }))).toEqual({ code: 'NOT_FOUND', said: 'NOT_FOUND: run abc does not exist (runId: must be a numeric id)' });
    // '01' is run 1 to PostgreSQL; it must not show run 1 under a second address.
    for (const bad of ['0', `0${runId}`, '1'.repeat(20)]) {
      expect(await refusal(caller.runs.timeline({ runId: bad })), bad).toEqual({ code: 'NOT_FOUND', said: `NOT_FOUND: run ${bad} does not exist (runId: ${OUT_OF_RANGE})` });
    }
    expect((await refusal(caller.runs.timeline({ runId: MAX_SEQUENCE_ID }))).code).toBe('NOT_FOUND');
    expect((await caller.runs.timeline({ runId })).run.id).toBe(runId);
  });

  it('refuses action, backfill, channel, rule and notification ids outside the sequence rule, naming the field', async () => {
    for (const bad of ['0', '01', '1'.repeat(20), '9223372036854775808']) {
      expect(await refusal(caller.runActions.get({ actionId: bad })), bad).toEqual({ code: 'BAD_REQUEST', said: `actionId: ${OUT_OF_RANGE}` });
      expect(await refusal(caller.backfills.cancel({ id: bad })), bad).toEqual({ code: 'BAD_REQUEST', said: `id: ${OUT_OF_RANGE}` });
      expect(await refusal(appRouter.createCaller(contextAs('admin')).notifications.deleteChannel({ id: bad })), bad).toEqual({ code: 'BAD_REQUEST', said: `id: ${OUT_OF_RANGE}` });
      expect(await refusal(caller.notifications.deleteRule({ id: bad })), bad).toEqual({ code: 'BAD_REQUEST', said: `id: ${OUT_OF_RANGE}` });
      expect(await refusal(caller.notifications.retry({ id: bad })), bad).toEqual({ code: 'BAD_REQUEST', said: `id: ${OUT_OF_RANGE}` });
    }
    expect((await refusal(caller.runActions.get({ actionId: MAX_SEQUENCE_ID }))).code).toBe('NOT_FOUND');
    expect((await refusal(caller.notifications.retry({ id: MAX_SEQUENCE_ID }))).code).toBe('NOT_FOUND');
  });

  it('takes DAG ids by the spec rule', async () => {
    expect(await refusal(caller.dags.get({ id: 'a/b' }))).toEqual({
      code: 'NOT_FOUND',
      said: 'NOT_FOUND: DAG a/b does not exist (id: may contain only letters, digits, "_", "." and "-", and must start with a letter or digit)',
    });
    expect((await caller.dags.get({ id: 'ids' })).dag.id).toBe('ids');
    expect(await refusal(caller.dags.trigger({ id: '-ids' }))).toEqual({
      code: 'BAD_REQUEST',
      said: 'id: may contain only letters, digits, "_", "." and "-", and must start with a letter or digit',
    });
    expect(await refusal(caller.dags.setPaused({ id: '', paused: true }))).toEqual({ code: 'BAD_REQUEST', said: 'id: must not be empty' });
    expect((await store.listRuns({ dagId: 'ids' })).length).toBe(1);
  });
});
