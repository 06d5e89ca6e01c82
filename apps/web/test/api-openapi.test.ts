import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NOTIFY_LIMITS, parseDagId, parseWorkerId, shardOf } from '@fenceline/core';
import { startApiHttp } from './support/api-http';
import { appRoutes } from './support/app-routes';

/**
 * The HTTP API's OpenAPI document as it is served: its structure (OpenAPI 3.1, every
 * operation answered, every $ref resolving, the bearer scheme), and a plain fetch client
 * that knows the API only from the document triggers a run and cancels it.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
let doc: Record<string, unknown> & { paths: Record<string, Record<string, Operation>>; servers: { url: string }[] };

interface Operation {
  operationId: string;
  parameters: { name: string; in: string; required: boolean }[];
  requestBody?: unknown;
  responses: Record<string, unknown>;
}

beforeAll(async () => {
  api = await startApiHttp();
  const res = await fetch(`${api.url}/openapi.json`);
  expect(res.status).toBe(200);
  doc = (await res.json()) as typeof doc;
  // A fresh database and every route module: slow on a loaded machine.
}, 60_000);
afterAll(async () => {
  // Every answer of this file was checked against the document (support/answer-check.ts),
  // and every operation's success answer among them at least once.
  if (api) {
    expect(api.answers.checked).toBeGreaterThan(20);
    const unchecked = api.answers.operationIds().filter((id) => !api.answers.answered2xx.has(id));
    expect(unchecked, 'operations whose 2xx answer was never checked against its schema').toEqual([]);
  }
  await api?.stop();
});

/** Every value under `node`, with its JSON pointer. */
function* walk(node: unknown, pointer = '#'): Generator<[string, unknown]> {
  yield [pointer, node];
  if (node !== null && typeof node === 'object') for (const [key, value] of Object.entries(node)) yield* walk(value, `${pointer}/${key.replace(/~/g, '~0').replace(/\//g, '~1')}`);
}

function resolve(pointer: string): unknown {
  let node: unknown = doc;
  for (const part of pointer.slice(2).split('/')) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string, unknown>)[part.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return node;
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options'];

describe('the OpenAPI document', () => {
  it('says OpenAPI 3.1 and offers bearer tokens as its security', () => {
    expect(doc.openapi).toMatch(/^3\.1\.\d+$/);
    expect(doc.components).toMatchObject({ securitySchemes: { bearerToken: { type: 'http', scheme: 'bearer' } } });
    expect(doc.security).toEqual([{ bearerToken: [] }]);
  });

  it('lists every endpoint, each with an id, its parameters and its answers', () => {
    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    expect(operations.map((o) => `${o.method.toUpperCase()} ${o.path}`).sort()).toEqual(
      [
        'GET /actions/{id}',
        'GET /dags',
        'GET /dags/{id}',
        'GET /runs',
        'GET /runs/{id}',
        'POST /dags',
        'POST /dags/{id}/pause',
        'POST /dags/{id}/resume',
        'POST /dags/{id}/trigger',
        'POST /runs/{id}/actions',
        'GET /backfills',
        'POST /backfills',
        'GET /backfills/{id}',
        'POST /backfills/{id}/cancel',
        'GET /limits',
        'PUT /limits/{name}',
        'DELETE /limits/{name}',
        'GET /notifications',
        'GET /notifications/channels',
        'POST /notifications/channels',
        'DELETE /notifications/channels/{id}',
        'GET /notifications/rules',
        'POST /notifications/rules',
        'DELETE /notifications/rules/{id}',
        'POST /notifications/{id}/retry',
      ].sort(),
    );
    for (const { path, method, op } of operations) {
      expect(METHODS, path).toContain(method);
      expect(op.operationId, path).toMatch(/^[a-zA-Z]+$/);
      expect(Object.keys(op.responses).length, path).toBeGreaterThan(1);
      expect(op.responses['401'], path).toBeDefined();
      // Every {name} of a path is a required path parameter of its operation.
      for (const name of [...path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]))
        expect(
          op.parameters.find((p) => p.in === 'path' && p.name === name && p.required),
          `${path} ${name}`,
        ).toBeDefined();
    }
    const trigger = doc.paths['/dags/{id}/trigger']!.post!;
    expect(trigger.parameters.map((p) => `${p.in}:${p.name}`)).toContain('header:Idempotency-Key');
    expect(trigger.requestBody).toBeDefined();
    expect(doc.paths['/runs']!.get!.parameters.map((p) => p.name)).toEqual(expect.arrayContaining(['dag', 'state', 'cursor', 'limit']));
  });

  it('documents every route file under api/v1, method by method, so the sweep reaches each', async () => {
    // The sweep (api-sweep.test.ts) sends hostile values to every operation of the document
    // that takes input, and the test server serves every route file; a route file missing
    // from the document would be neither documented nor swept, so it fails here.
    const files: string[] = [];
    for (const route of appRoutes().filter((r) => r.kind === 'route' && r.path.startsWith('/api/v1/'))) {
      const path = route.path.slice('/api/v1'.length).replace(/\[(\w+)\]/g, '{$1}');
      // The document itself is the one route it does not describe.
      if (path === '/openapi.json') continue;
      const module = (await import(/* @vite-ignore */ route.absolute)) as Record<string, unknown>;
      for (const method of METHODS) if (typeof module[method.toUpperCase()] === 'function') files.push(`${method.toUpperCase()} ${path}`);
    }
    const documented = Object.entries(doc.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
    expect(files.length).toBeGreaterThanOrEqual(25);
    expect(files.sort()).toEqual(documented.sort());
  });

  it('has every $ref resolve to a schema in the document', () => {
    const refs = [...walk(doc)].filter(([pointer]) => pointer.endsWith('/$ref')).map(([, value]) => value);
    expect(refs.length).toBeGreaterThan(10);
    for (const ref of refs) {
      expect(typeof ref === 'string' && ref.startsWith('#/'), String(ref)).toBe(true);
      expect(resolve(ref as string), String(ref)).toBeTypeOf('object');
    }
    const error = resolve('#/components/schemas/Error') as { properties: Record<string, unknown>; required: string[] };
    expect(Object.keys(error.properties).sort()).toEqual(['code', 'issues', 'message']);
    expect(error.required.sort()).toEqual(['code', 'message']);
  });

  it('types every answer fully: each object names its fields and allows no other', () => {
    const schemas = (doc.components as { schemas: Record<string, unknown> }).schemas;
    const answers = Object.entries(schemas).filter(([name]) => name.endsWith('Answer') || name === 'Error');
    expect(answers.length).toBe(Object.values(doc.paths).flatMap((item) => Object.keys(item)).length + 1);
    for (const [name, schema] of answers) {
      for (const [pointer, node] of walk(schema, `#/components/schemas/${name}`)) {
        if (node === null || typeof node !== 'object' || (node as { type?: unknown }).type !== 'object') continue;
        const object = node as { properties?: Record<string, unknown>; additionalProperties?: unknown; propertyNames?: unknown };
        // A map (params, a payload, a task's config) types its keys or values; every other object lists its fields and no more.
        if (object.propertyNames !== undefined || (typeof object.additionalProperties === 'object' && object.properties === undefined)) continue;
        expect(object.additionalProperties, pointer).toBe(false);
        expect(Object.keys(object.properties ?? {}).length, pointer).toBeGreaterThan(0);
      }
    }
    // A DAG list row types more than its id.
    const row = resolve('#/components/schemas/ListDagsAnswer/properties/rows/items') as { properties: Record<string, unknown>; required: string[] };
    expect(row.required).toEqual(expect.arrayContaining(['id', 'version', 'schedule', 'paused', 'nextRunAt', 'taskCount', 'lastRun']));
  });
});

describe('a client written from the document', () => {
  /** Calls an operation by its id, finding its method and path in the document only. */
  async function call(operationId: string, opts: { token: string; path?: Record<string, string>; body?: unknown; headers?: Record<string, string> }) {
    const found = Object.entries(doc.paths)
      .flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })))
      .find((o) => o.op.operationId === operationId);
    if (!found) throw new Error(`the document has no operation ${operationId}`);
    const path = found.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(opts.path?.[name] ?? ''));
    const base = new URL(doc.servers[0]!.url, api.url);
    const res = await fetch(`${base.href.replace(/\/$/, '')}${path}`, {
      method: found.method.toUpperCase(),
      headers: { authorization: `Bearer ${opts.token}`, 'content-type': 'application/json', ...opts.headers },
      body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
    });
    const body = (await res.json()) as Record<string, unknown>;
    // The document lists every status an operation answers with.
    expect(Object.keys(found.op.responses), `${operationId} answered ${res.status}`).toContain(String(res.status));
    return { status: res.status, body };
  }

  it('applies a DAG, triggers a run and cancels it', async () => {
    const token = await api.tokenFor('operator');
    const applied = await call('applyDag', { token, body: { id: 'from-the-document', tasks: [{ id: 'only', type: 'noop', config: {} }] } });
    expect(applied.status).toBe(201);
    const run = await call('triggerDag', { token, path: { id: 'from-the-document' }, body: {}, headers: { 'idempotency-key': 'doc-client-1' } });
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ dagId: 'from-the-document', state: 'queued' });
    const action = await call('requestRunAction', { token, path: { id: String(run.body.id) }, body: { kind: 'cancel', reason: 'written from the document' } });
    expect(action.status).toBe(202);
    expect(action.body).toMatchObject({ runId: run.body.id, kind: 'cancel', state: 'pending' });
    const read = await call('getRunAction', { token, path: { id: String(action.body.id) } });
    expect(read.body).toMatchObject({ id: action.body.id, kind: 'cancel' });
    const refused = await call('getRun', { token, path: { id: 'not-a-run' } });
    expect(refused.body.code).toBe('NOT_FOUND');
  });

  it('backfills a DAG, follows its progress, lists it and cancels it; bad input is a 400 naming the field', async () => {
    const operator = await api.tokenFor('operator');
    const viewer = await api.tokenFor('viewer');
    await call('applyDag', { token: operator, body: { id: 'doc-hourly', schedule: { kind: 'interval', everyMs: 3_600_000 }, tasks: [{ id: 'only', type: 'noop' }] } });
    const body = { dagId: 'doc-hourly', from: '2026-01-01T00:00:00Z', to: '2026-01-01T06:00:00Z', maxActiveRuns: 2 };
    const created = await call('createBackfill', { token: operator, body });
    expect(created).toMatchObject({ status: 201, body: { dagId: 'doc-hourly', totalSlots: 6, maxActiveRuns: 2, mode: 'skip', state: 'running' } });
    const id = String(created.body.id);
    expect((await call('getBackfill', { token: viewer, path: { id } })).body).toMatchObject({ id, totalSlots: 6 });
    const listed = await call('listBackfills', { token: viewer });
    expect((listed.body.backfills as { id: string }[]).map((b) => b.id)).toContain(id);
    expect((await call('createBackfill', { token: viewer, body })).status).toBe(403);
    const cancelled = await call('cancelBackfill', { token: operator, path: { id } });
    expect(cancelled).toMatchObject({ status: 200, body: { id, state: 'cancelled' } });
    const audit = await api.store.listAudit({ limit: 50 });
    expect(
      audit
        .filter((e) => e.target === id && e.action.startsWith('backfill.'))
        .map((e) => e.action)
        .sort(),
    ).toEqual(['backfill.cancelled', 'backfill.created']);
    // Sent twice with one Idempotency-Key: one backfill, the second answer 200 with it, audited once.
    const keyed = await call('createBackfill', { token: operator, body: { ...body, mode: 'rerun' }, headers: { 'idempotency-key': 'doc-fill-1' } });
    expect(keyed).toMatchObject({ status: 201, body: { mode: 'rerun' } });
    expect(keyed.body.repeated).toBeUndefined();
    const again = await call('createBackfill', { token: operator, body: { ...body, mode: 'rerun' }, headers: { 'idempotency-key': 'doc-fill-1' } });
    expect(again).toMatchObject({ status: 200, body: { id: keyed.body.id, mode: 'rerun', repeated: true } });
    // The key with another body (the default mode) is another request: refused 422, naming the header.
    expect(await call('createBackfill', { token: operator, body, headers: { 'idempotency-key': 'doc-fill-1' } })).toMatchObject({
      status: 422,
      body: { code: 'KEY_REUSED', issues: [{ field: 'Idempotency-Key' }] },
    });
    expect((await api.store.listAudit({ limit: 50 })).filter((e) => e.action === 'backfill.created' && e.target === keyed.body.id)).toHaveLength(1);
    expect((await call('createBackfill', { token: operator, body, headers: { 'idempotency-key': 'bad key!' } })).body).toMatchObject({
      code: 'INVALID_INPUT',
      issues: [{ field: 'Idempotency-Key' }],
    });
    const reversed = await call('createBackfill', { token: operator, body: { ...body, from: body.to, to: body.from } });
    expect(reversed.status).toBe(400);
    expect(reversed.body).toMatchObject({ code: 'INVALID_INPUT' });
    const unknown = await call('createBackfill', { token: operator, body: { ...body, extra: 1 } });
    expect(unknown.body).toMatchObject({ code: 'INVALID_INPUT', issues: [{ field: 'extra', message: 'is not a known field' }] });
    expect((await call('createBackfill', { token: operator, body: { ...body, dagId: 'no-such-dag' } })).status).toBe(404);
    expect((await call('getBackfill', { token: viewer, path: { id: '999999' } })).status).toBe(404);
    expect((await call('getBackfill', { token: viewer, path: { id: 'x' } })).status).toBe(400);
  });

  it('reads a job a worker holds a lease on as running', async () => {
    const operator = await api.tokenFor('operator');
    const viewer = await api.tokenFor('viewer');
    await call('applyDag', { token: operator, body: { id: 'doc-held', tasks: [{ id: 'held', type: 'noop' }] } });
    const run = await call('triggerDag', { token: operator, path: { id: 'doc-held' }, body: {} });
    const runId = String(run.body.id);
    // The test leads the DAG's shard and starts the run and grants the lease, as its leader would.
    const dagId = parseDagId('doc-held');
    const lead = (await api.store.acquireShard({ shard: shardOf(dagId, 4), nodeId: 'doc-test-leader', ttlMs: 60_000 }))!.token;
    const job = { taskId: 'held', state: 'ready' as const, maxAttempts: 1, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 };
    const [started] = (await api.store.startRunsAcross([{ token: lead, items: [{ runId: runId as never, jobs: [job] }] }])) as unknown as { id: string }[][][];
    const jobId = started![0]![0]!.id;
    await api.store.grantLeasesMany([{ token: lead, grants: [{ jobId: jobId as never, workerId: parseWorkerId('doc-worker') }] }], 60_000);
    expect((await api.store.getJob(jobId as never)).state).toBe('leased');
    const read = await call('getRun', { token: viewer, path: { id: runId } });
    expect(read.status).toBe(200);
    expect(read.body.run).toMatchObject({ id: runId, state: 'running' });
    expect(read.body.jobs).toEqual([expect.objectContaining({ taskId: 'held', state: 'running' })]);
    expect(JSON.stringify(read.body)).not.toContain('"state":"leased"');
  });

  it('answers every other operation with a success a client reads by the document', async () => {
    const viewer = await api.tokenFor('viewer');
    const operator = await api.tokenFor('operator');
    const admin = await api.tokenFor('admin');
    await call('applyDag', { token: operator, body: { id: 'doc-every', schedule: { kind: 'interval', everyMs: 3_600_000 }, tasks: [{ id: 'only', type: 'noop' }] } });
    expect((await call('listDags', { token: viewer })).status).toBe(200);
    expect((await call('getDag', { token: viewer, path: { id: 'doc-every' } })).status).toBe(200);
    expect((await call('pauseDag', { token: operator, path: { id: 'doc-every' } })).body).toMatchObject({ id: 'doc-every', paused: true });
    expect((await call('resumeDag', { token: operator, path: { id: 'doc-every' } })).body).toMatchObject({ id: 'doc-every', paused: false });
    expect((await call('listRuns', { token: viewer })).status).toBe(200);
    const channel = await call('createNotificationChannel', { token: admin, body: { name: 'doc-hook', kind: 'webhook', url: 'http://127.0.0.1:9/doc' } });
    expect(channel.status).toBe(201);
    expect((await call('listNotificationChannels', { token: viewer })).status).toBe(200);
    const rule = await call('createNotificationRule', { token: operator, body: { channelId: channel.body.id, event: 'run_failed' } });
    expect(rule.status).toBe(201);
    expect((await call('listNotificationRules', { token: viewer })).status).toBe(200);
    // A dead letter to send again: its deliveries all failed, recorded as a shard's leader would.
    const dagId = parseDagId('doc-every');
    const lead = (await api.store.acquireShard({ shard: shardOf(dagId, 4), nodeId: 'doc-test-leader', ttlMs: 60_000 }))!.token;
    const [dead] = await api.store.enqueueNotifications(lead, [{ event: 'run_failed', dagId, subject: 'doc-run', payload: { runId: 'doc-run' } }]);
    for (let i = 0; i < NOTIFY_LIMITS.maxAttempts; i++) await api.store.recordDelivery(lead, dead!.id, { kind: 'failed', error: 'no answer' });
    expect((await call('listNotifications', { token: viewer })).status).toBe(200);
    expect((await call('retryNotification', { token: operator, path: { id: dead!.id } })).body).toMatchObject({ id: dead!.id, state: 'pending' });
    expect((await call('deleteNotificationRule', { token: operator, path: { id: String(rule.body.id) } })).status).toBe(200);
    expect((await call('deleteNotificationChannel', { token: admin, path: { id: String(channel.body.id) } })).status).toBe(200);
  });

  it('sets, lists and deletes a resource limit as an operator; a viewer lists but may not set; bad input names the field', async () => {
    const operator = await api.tokenFor('operator');
    const viewer = await api.tokenFor('viewer');
    const set = await call('setLimit', { token: operator, path: { name: 'doc-warehouse' }, body: { capacity: 3 } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ name: 'doc-warehouse', capacity: 3, used: 0, waiting: 0 });
    const listed = await call('listLimits', { token: viewer });
    expect(listed.status).toBe(200);
    expect(listed.body.limits).toEqual([expect.objectContaining({ name: 'doc-warehouse', capacity: 3, waiters: [] })]);
    const forbidden = await call('setLimit', { token: viewer, path: { name: 'doc-warehouse' }, body: { capacity: 9 } });
    expect(forbidden.status).toBe(403);
    const zero = await call('setLimit', { token: operator, path: { name: 'doc-warehouse' }, body: { capacity: 0 } });
    expect(zero.status).toBe(400);
    expect(zero.body).toMatchObject({ code: 'INVALID_INPUT' });
    expect(String(zero.body.message)).toMatch(/capacity must be at least 1/);
    const badName = await call('setLimit', { token: operator, path: { name: 'Bad Name' }, body: { capacity: 1 } });
    expect(badName.status).toBe(400);
    expect(String(badName.body.message)).toMatch(/^name must be lower-case letters/);
    expect((await api.store.listResourceLimits()).map((l) => [l.name, l.capacity])).toEqual([['doc-warehouse', 3]]);
    const deleted = await call('deleteLimit', { token: operator, path: { name: 'doc-warehouse' } });
    expect(deleted).toMatchObject({ status: 200, body: { name: 'doc-warehouse', deleted: true } });
    expect((await call('deleteLimit', { token: operator, path: { name: 'doc-warehouse' } })).status).toBe(404);
    expect(await api.store.listResourceLimits()).toEqual([]);
  });
});
