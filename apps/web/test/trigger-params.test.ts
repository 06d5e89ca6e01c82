import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, type UserName } from '@fenceline/core';
import { hashPassword } from '@fenceline/db/people';
import { callProcedure, cookieOf, startConsoleHttp } from './support/console-http';

/**
 * The console's trigger with params, through its real HTTP route and a real PostgreSQL: bad
 * values are refused with an issue per field and write nothing (no run, no audit entry); good
 * ones queue a run that carries them.
 */

const PASSWORD = 'a password for trigger tests';
let consoleHttp: Awaited<ReturnType<typeof startConsoleHttp>>;
let cookie: string;
const dagId = parseDagId('with-params');

beforeAll(async () => {
  consoleHttp = await startConsoleHttp();
  await consoleHttp.store.createUser({ name: 'pia' as UserName, role: 'operator', passwordHash: await hashPassword(PASSWORD) });
  cookie = cookieOf(await callProcedure(consoleHttp.url, 'auth.signIn', { mutation: true, input: { name: 'pia', password: PASSWORD } }));
  const saved = await callProcedure(consoleHttp.url, 'dags.save', {
    mutation: true,
    input: {
      spec: {
        id: dagId,
        params: { region: { type: 'string', enum: ['eu', 'us'], default: 'eu' }, batch: { type: 'integer', required: true } },
        tasks: [{ id: 'one', type: 'noop', config: {} }],
      },
    },
    headers: { cookie },
  });
  expect(saved.status).toBe(200);
});
afterAll(async () => {
  await consoleHttp?.stop();
});

/** A trigger as the console's client sends it, with the whole error body kept. */
async function trigger(input: unknown): Promise<{
  status: number;
  body: {
    result?: { data: { json: { id: string; params: unknown } } };
    error?: { json: { message: string; data: { fenceline: { code: string; details: { issues: unknown } } | null } } };
  };
}> {
  const res = await fetch(`${consoleHttp.url}/api/trpc/dags.trigger`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ json: input }),
  });
  return { status: res.status, body: (await res.json()) as never };
}

describe('console: trigger with params', () => {
  it('refuses bad values with an issue per field and writes nothing', async () => {
    const refused = await trigger({ id: dagId, requestKey: 'bad-1', params: { batch: 'lots', region: 'asia', colour: 'red' } });
    expect(refused.status).toBe(400);
    expect(refused.body.error!.json.data.fenceline!.code).toBe('INVALID_INPUT');
    expect(refused.body.error!.json.data.fenceline!.details.issues).toEqual([
      { field: 'params.colour', message: 'is not a parameter of this DAG' },
      { field: 'params.batch', message: 'must be an integer, got "lots"' },
      { field: 'params.region', message: 'must be one of "eu", "us"' },
    ]);
    const missing = await trigger({ id: dagId, requestKey: 'bad-2' });
    expect(missing.body.error!.json.data.fenceline!.details.issues).toEqual([{ field: 'params.batch', message: 'is required' }]);
    expect(await consoleHttp.store.listRuns({ dagId, limit: 10 })).toEqual([]);
    expect((await consoleHttp.store.listAudit({ dagId })).map((e) => e.action)).toEqual(['dag.saved']);
  });

  it('queues a run with the values and the defaults, and records them in the audit log', async () => {
    const queued = await trigger({ id: dagId, requestKey: 'good-1', params: { batch: 12 } });
    expect(queued.status).toBe(200);
    const run = queued.body.result!.data.json;
    expect(run.params).toEqual({ batch: 12, region: 'eu' });
    expect((await consoleHttp.store.getRun(run.id as never)).params).toEqual({ batch: 12, region: 'eu' });
    const [entry] = await consoleHttp.store.listAudit({ dagId, limit: 1 });
    expect(entry).toMatchObject({ action: 'dag.triggered', actor: 'pia', details: { runId: run.id, requestKey: 'good-1', params: { batch: 12, region: 'eu' } } });
  });
});
