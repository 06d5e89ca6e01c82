import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LIMITS, parseDagId } from '@fenceline/core';
import { answerForError } from '../src/server/api/errors';
import { startApiHttp } from './support/api-http';

/**
 * The HTTP API under /api/v1 through its real route handlers over HTTP, on a real
 * PostgreSQL: each endpoint with good and bad input and each role, refusals in the one error
 * shape with nothing written, Idempotency-Key, and a client written from the OpenAPI document.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
let viewer: string;
let operator: string;
const dagId = parseDagId('api-params');
const spec = {
  id: dagId,
  params: { region: { type: 'string', enum: ['eu', 'us'], default: 'eu' }, batch: { type: 'integer', required: true } },
  tasks: [
    { id: 'one', type: 'noop', config: {} },
    { id: 'two', type: 'noop', config: {}, dependsOn: ['one'] },
  ],
};

beforeAll(async () => {
  api = await startApiHttp();
  viewer = await api.tokenFor('viewer');
  operator = await api.tokenFor('operator');
});
afterAll(async () => {
  await api?.stop();
});

interface Answer {
  status: number;
  body: Record<string, unknown> & { code?: string; message?: string; issues?: { field: string; message: string }[] };
}

async function send(method: 'GET' | 'POST', path: string, opts: { token?: string; body?: unknown; raw?: string; headers?: Record<string, string> } = {}): Promise<Answer> {
  const headers: Record<string, string> = { ...opts.headers };
  if (opts.token) headers.authorization = `Bearer ${opts.token}`;
  if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(`${api.url}${path}`, { method, headers, body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)) });
  return { status: res.status, body: (await res.json()) as Answer['body'] };
}

const fields = (answer: Answer) => (answer.body.issues ?? []).map((i) => i.field);
const auditCount = async () => (await api.store.listAudit({ limit: 500 })).length;
const runCount = async () => (await api.store.pageRuns({ dagId, limit: 500 })).rows.length;

/** Says nothing of how the server is built: no statement, no stack, no file. */
function expectPlain(answer: Answer): void {
  const text = JSON.stringify(answer.body);
  expect(text).not.toMatch(/SELECT|INSERT|UPDATE |\bat .*\.ts:|node_modules/);
  expect(Object.keys(answer.body).every((k) => ['code', 'message', 'issues'].includes(k))).toBe(true);
}

describe('HTTP API: apply and read DAGs', () => {
  it('refuses a spec with problems, naming each, and stores nothing', async () => {
    const before = await auditCount();
    const answer = await send('POST', '/dags', { token: operator, body: { id: dagId, tasks: [{ id: 'one', type: 'noop', dependsOn: ['nope'] }] } });
    expect(answer.status).toBe(400);
    expect(answer.body.code).toBe('INVALID_DAG');
    expect(fields(answer)).toContain('tasks.0.dependsOn.0');
    expectPlain(answer);
    expect((await send('GET', `/dags/${dagId}`, { token: viewer })).status).toBe(404);
    expect(await auditCount()).toBe(before);
  });

  it('refuses a body that is not JSON, and one over the limit', async () => {
    const bad = await send('POST', '/dags', { token: operator, raw: '{"id": ' });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(['body']);
    const big = await send('POST', '/dags', { token: operator, raw: JSON.stringify({ id: dagId, pad: 'x'.repeat(LIMITS.maxSpecBytes + 64 * 1024) }) });
    expect(big.status).toBe(413);
    expect(big.body.code).toBe('TOO_LARGE');
  });

  it('stores a spec once and audits it as the console does', async () => {
    const first = await send('POST', '/dags', { token: operator, body: spec });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ dagId, version: 1, created: true });
    const again = await send('POST', '/dags', { token: operator, body: spec });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ version: 1, created: false });
    const saved = await api.store.listAudit({ action: 'dag.saved', dagId });
    expect(saved).toHaveLength(1);
    expect(saved[0]).toMatchObject({ actorKind: 'token', actor: 'operator-2', details: { version: 1 } });
  });

  it('lists and reads DAGs for a viewer', async () => {
    const list = await send('GET', '/dags?search=api&limit=10', { token: viewer });
    expect(list.status).toBe(200);
    expect((list.body.rows as { id: string }[]).map((r) => r.id)).toEqual([dagId]);
    const one = await send('GET', `/dags/${dagId}`, { token: viewer });
    expect(one.status).toBe(200);
    expect((one.body.dag as { version: number }).version).toBe(1);
    expect(one.body.versions).toHaveLength(1);
    const badLimit = await send('GET', '/dags?limit=0&colour=red', { token: viewer });
    expect(badLimit.status).toBe(400);
    expect(fields(badLimit).sort()).toEqual(['colour', 'limit']);
    expect((await send('GET', '/dags/no%20such', { token: viewer })).body.code).toBe('NOT_FOUND');
  });

  it('answers an apply repeated with its Idempotency-Key as the first time, storing nothing, even after a change in between', async () => {
    const keyed = { ...spec, id: 'keyed-apply' };
    const headers = { 'idempotency-key': 'ci-build-7' };
    const bad = await send('POST', '/dags', { token: operator, body: keyed, headers: { 'idempotency-key': 'no spaces please' } });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(['Idempotency-Key']);
    expect((await send('GET', '/dags/keyed-apply', { token: viewer })).status).toBe(404);

    const first = await send('POST', '/dags', { token: operator, body: keyed, headers });
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ dagId: 'keyed-apply', version: 1, created: true });
    // Someone else's change lands; the retried request must neither undo it nor audit again.
    expect((await send('POST', '/dags', { token: operator, body: { ...keyed, description: 'edited' } })).body).toMatchObject({ version: 2, created: true });
    const audits = await auditCount();
    const again = await send('POST', '/dags', { token: operator, body: keyed, headers });
    expect(again).toEqual(first);
    const read = await send('GET', '/dags/keyed-apply', { token: viewer });
    expect((read.body.dag as { version: number }).version).toBe(2);
    expect(read.body.versions).toHaveLength(2);
    expect(await auditCount()).toBe(audits);
  });
});

describe('HTTP API: roles', () => {
  const writes: [string, unknown][] = [
    ['/dags', spec],
    [`/dags/${dagId}/trigger`, { params: { batch: 1 } }],
    [`/dags/${dagId}/pause`, undefined],
    [`/dags/${dagId}/resume`, undefined],
    ['/runs/1/actions', { kind: 'cancel' }],
  ];
  const reads = ['/dags', `/dags/${dagId}`, '/runs', '/runs/1', '/actions/1'];

  it('refuses every endpoint without a valid token, with 401', async () => {
    for (const path of reads) {
      expect((await send('GET', path)).status, path).toBe(401);
      expect((await send('GET', path, { headers: { authorization: 'Bearer flt_not-a-token' } })).status, path).toBe(401);
    }
    for (const [path, body] of writes) {
      const answer = await send('POST', path, { body });
      expect(answer.status, path).toBe(401);
      expect(answer.body.code).toBe('UNAUTHORIZED');
    }
  });

  it('refuses every write to a viewer with 403 and writes nothing', async () => {
    const before = [await auditCount(), await runCount()];
    for (const [path, body] of writes) {
      const answer = await send('POST', path, { token: viewer, body });
      expect(answer.status, path).toBe(403);
      expect(answer.body.code).toBe('FORBIDDEN');
      expectPlain(answer);
    }
    expect([await auditCount(), await runCount()]).toEqual(before);
  });
});

describe('HTTP API: trigger, pause and resume', () => {
  it('refuses bad params and a bad Idempotency-Key, naming each, and queues nothing', async () => {
    const before = [await auditCount(), await runCount()];
    const params = await send('POST', `/dags/${dagId}/trigger`, { token: operator, body: { params: { batch: 'lots', region: 'asia' } } });
    expect(params.status).toBe(400);
    expect(params.body.code).toBe('INVALID_INPUT');
    expect(fields(params).sort()).toEqual(['params.batch', 'params.region']);
    const key = await send('POST', `/dags/${dagId}/trigger`, { token: operator, body: { params: { batch: 1 } }, headers: { 'idempotency-key': 'no spaces please' } });
    expect(key.status).toBe(400);
    expect(fields(key)).toEqual(['Idempotency-Key']);
    const unknown = await send('POST', '/dags/no-such-dag/trigger', { token: operator, body: {} });
    expect(unknown.status).toBe(404);
    expect([await auditCount(), await runCount()]).toEqual(before);
  });

  it('queues one run for an Idempotency-Key sent twice and answers both with it', async () => {
    const before = await runCount();
    const headers = { 'idempotency-key': 'deploy-42' };
    const first = await send('POST', `/dags/${dagId}/trigger`, { token: operator, body: { params: { batch: 3 } }, headers });
    const second = await send('POST', `/dags/${dagId}/trigger`, { token: operator, body: { params: { batch: 3 } }, headers });
    expect(first.status).toBe(201);
    expect(second).toEqual(first);
    expect(first.body).toMatchObject({ dagId, trigger: 'manual', params: { batch: 3, region: 'eu' } });
    expect(await runCount()).toBe(before + 1);
    const audited = await api.store.listAudit({ action: 'dag.triggered', dagId });
    expect(audited[0]).toMatchObject({ actorKind: 'token', details: { runId: first.body.id, requestKey: 'deploy-42' } });
  });

  it('pauses and resumes, writing one audit entry each', async () => {
    const paused = await send('POST', `/dags/${dagId}/pause`, { token: operator });
    expect(paused.status).toBe(200);
    expect(paused.body.paused).toBe(true);
    expect((await send('POST', `/dags/${dagId}/pause`, { token: operator })).body.paused).toBe(true);
    expect((await send('POST', `/dags/${dagId}/resume`, { token: operator })).body.paused).toBe(false);
    expect((await api.store.listAudit({ dagId })).map((a) => a.action).filter((a) => a !== 'dag.triggered' && a !== 'dag.saved')).toEqual(['dag.resumed', 'dag.paused']);
    const bad = await send('POST', '/dags/bad%20id/pause', { token: operator });
    expect(bad.status).toBe(400);
    expect(fields(bad)).toEqual(['id']);
  });
});

describe('HTTP API: runs and run actions', () => {
  it('pages runs by keyset cursor and refuses a bad filter naming it', async () => {
    await send('POST', `/dags/${dagId}/trigger`, { token: operator, body: { params: { batch: 4 } } });
    const first = await send('GET', `/runs?dag=${dagId}&limit=1`, { token: viewer });
    expect(first.status).toBe(200);
    expect(first.body.rows).toHaveLength(1);
    expect(typeof first.body.next).toBe('string');
    const second = await send('GET', `/runs?dag=${dagId}&limit=1&cursor=${encodeURIComponent(first.body.next as string)}`, { token: viewer });
    expect(second.body.rows).toHaveLength(1);
    expect((second.body.rows as { id: string }[])[0]!.id).not.toBe((first.body.rows as { id: string }[])[0]!.id);
    for (const [query, field] of [
      ['state=lost', 'state'],
      ['from=yesterday', 'from'],
      ['cursor=forged', 'cursor'],
    ]) {
      const answer = await send('GET', `/runs?${query}`, { token: viewer });
      expect(answer.status, query).toBe(400);
      expect(fields(answer), query).toEqual([field]);
    }
  });

  it('reads a run with its jobs, and answers NOT_FOUND for an id no run has', async () => {
    const runId = (await api.store.pageRuns({ dagId, limit: 1 })).rows[0]!.id;
    // This test leads the DAG's shard itself and starts the run, as its leader would.
    const lead = (await api.store.acquireShard({ shard: (await api.store.getDag(dagId)).shard, nodeId: 'api-test', ttlMs: 60_000 }))!.token;
    const job = { state: 'ready' as const, maxAttempts: 1, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 };
    await api.store.startRunsAcross([
      {
        token: lead,
        items: [
          {
            runId,
            jobs: [
              { ...job, taskId: 'one' },
              { ...job, taskId: 'two', state: 'waiting' as const },
            ],
          },
        ],
      },
    ]);
    const answer = await send('GET', `/runs/${runId}`, { token: viewer });
    expect(answer.status).toBe(200);
    expect(answer.body.run).toMatchObject({ id: runId, dagId, state: 'running' });
    expect((answer.body.jobs as { taskId: string; state: string }[]).map((j) => `${j.taskId}:${j.state}`).sort()).toEqual(['one:ready', 'two:waiting']);
    expect((await send('GET', '/runs/abc', { token: viewer })).status).toBe(404);
    expect((await send('GET', '/runs/999999', { token: viewer })).status).toBe(404);
  });

  it('refuses a bad action naming its field and stores nothing', async () => {
    const runId = (await api.store.pageRuns({ dagId, limit: 1 })).rows[0]!.id;
    const before = (await api.store.listRunActions(runId)).length;
    const kind = await send('POST', `/runs/${runId}/actions`, { token: operator, body: { kind: 'explode' } });
    expect(kind.status).toBe(400);
    expect(fields(kind)).toEqual(['kind']);
    const mark = await send('POST', `/runs/${runId}/actions`, { token: operator, body: { kind: 'mark_success', taskIds: ['ghost'] } });
    expect(mark.status).toBe(400);
    expect(fields(mark)).toEqual(expect.arrayContaining(['taskIds']));
    expectPlain(mark);
    expect((await api.store.listRunActions(runId)).length).toBe(before);
    expect((await send('GET', '/actions/x1', { token: viewer })).status).toBe(400);
    expect((await send('GET', '/actions/999999', { token: viewer })).status).toBe(404);
  });

  it('stores one action for an Idempotency-Key sent twice, and audits it', async () => {
    const runId = (await api.store.pageRuns({ dagId, limit: 1 })).rows[0]!.id;
    const headers = { 'idempotency-key': 'cancel-once' };
    const first = await send('POST', `/runs/${runId}/actions`, { token: operator, body: { kind: 'cancel', reason: 'not needed' }, headers });
    const second = await send('POST', `/runs/${runId}/actions`, { token: operator, body: { kind: 'cancel', reason: 'not needed' }, headers });
    expect(first.status).toBe(202);
    expect(second.body.id).toBe(first.body.id);
    expect(await api.store.listRunActions(runId)).toHaveLength(1);
    const read = await send('GET', `/actions/${String(first.body.id)}`, { token: viewer });
    expect(read.body).toMatchObject({ id: first.body.id, kind: 'cancel', runId });
    const audited = await api.store.listAudit({ action: 'run.action_requested', dagId });
    expect(audited[0]).toMatchObject({ actorKind: 'token', target: runId, details: { actionId: first.body.id, kind: 'cancel' } });
  });
});

describe('HTTP API: unexpected failures', () => {
  it('answers with an opaque id only, never the statement or the stack', async () => {
    // A driver's error quoting a statement: it must reach the log, never the caller.
    const statement = ['SELECT', 'secret', 'FROM', 'users'].join(' ');
    const failure = new Error(`syntax error at or near "SELECT" in ${statement}`);
    // The detail goes to the console's log, under the id the answer carries.
    const logged = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    const answer = answerForError(failure, 'listRuns');
    const line = String(logged.mock.calls[0]?.[0]);
    logged.mockRestore();
    expect(answer.status).toBe(500);
    const body = (await answer.json()) as Record<string, unknown>;
    expect(body).toEqual({ code: 'INTERNAL', message: expect.stringMatching(/^internal error; id [0-9a-f]{16}$/) as unknown });
    expect(line).toContain(String(body.message).slice(-16));
    expect(line).toContain(statement);
  });
});
