import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { startApiHttp } from './support/api-http';
import { appRoutes } from './support/app-routes';
import { storeSnapshot } from './support/store-snapshot';
import { leakIn } from '../../../test/support/bad-input';

/**
 * Hostile values in every field of every endpoint the OpenAPI document lists, generated
 * from the document itself (so an endpoint added later is swept the day it is added), sent
 * over HTTP through the console's proxy and the real route handlers to a real PostgreSQL.
 * Each must be answered 4xx in the documented error shape, naming no SQL or stack, and
 * nothing may be written.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
let admin: string;
let doc: { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, JsonSchema> } };

interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  format?: string;
  $ref?: string;
}
interface Operation {
  operationId: string;
  parameters: { name: string; in: 'path' | 'query' | 'header'; schema: JsonSchema }[];
  requestBody?: { content: { 'application/json': { schema: JsonSchema } } };
  responses: Record<string, unknown>;
}

const big = 'x'.repeat(100 * 1024);
/**
 * 100 KB cannot travel in an address: the HTTP server refuses a request line over 16 KiB
 * with 431 before any handler runs. In a path or query, 10 KB stands for it: past every
 * field's own limit, within the server's.
 */
const mid = 'x'.repeat(10 * 1024);
const cursorOf = (plain: string) => Buffer.from(plain).toString('base64url');

/** Values no string field takes: a NUL, lone surrogates, 100 KB. */
const HOSTILE_STRINGS: unknown[] = ['nul\u0000here', 'lone\ud800', '\udfffend', big];
/** Instants PostgreSQL cannot hold, or dates that do not exist. */
const HOSTILE_INSTANTS = ['0000-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '-000001-01-01T00:00:00Z', '+275760-09-13T00:00:00Z', '9999-12-31T23:59:59-01:00'];
/** Cursors shaped like the store's, naming positions that do not exist, or written differently. */
const HOSTILE_CURSORS = [
  cursorOf('r1|newest|after|0000-01-01T00:00:00.000000Z|1'),
  cursorOf('r1|newest|after|2026-02-30T00:00:00.000000Z|1'),
  cursorOf('r1|newest|after|2026-01-01T00:00:00.000000Z|99999999999999999999'),
  `${cursorOf('r1|newest|after|2026-01-01T00:00:00.000000Z|1')}A`,
];
/** Numbers no field takes. */
const HOSTILE_NUMBERS: unknown[] = [-1, -1e308, 1e308, 2 ** 64];
/** Path segments that are no percent-encoding of UTF-8, or decode to what no id has; sent as they are. */
const HOSTILE_SEGMENTS = ['%FF', '%ED%A0%80', '%', '%E0%A4%A', '%00', '%ED%BF%BF', encodeURIComponent(mid)];
/** Query values the same way: sent raw in the query string. */
const HOSTILE_QUERY_TEXT = ['%FF', '%', '%ED%A0%80', '%00'];

/** Percent-encoding of any text, a lone surrogate as the three bytes a careless client sends for it (which are no UTF-8). */
function encodeAny(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return text.replace(/[\ud800-\udfff]/g, (c) => {
      const code = c.charCodeAt(0);
      return [0xe0 | (code >> 12), 0x80 | ((code >> 6) & 0x3f), 0x80 | (code & 0x3f)].map((b) => `%${b.toString(16).toUpperCase()}`).join('');
    });
  }
}

function deref(schema: JsonSchema): JsonSchema {
  return schema.$ref ? doc.components.schemas[schema.$ref.split('/').pop()!]! : schema;
}

/** A value a schema accepts, to hold every field but the one under test. */
function sample(schema: JsonSchema): unknown {
  const s = deref(schema);
  if (s.enum) return s.enum[0];
  if (s.anyOf) return sample(s.anyOf[0]!);
  const type = Array.isArray(s.type) ? s.type[0] : s.type;
  if (type === 'object') return Object.fromEntries((s.required ?? []).map((k) => [k, sample(s.properties![k]!)]));
  if (type === 'array') return [];
  if (type === 'number' || type === 'integer') return 1;
  if (type === 'boolean') return false;
  return 'sweep';
}

function isInstant(name: string, schema: JsonSchema): boolean {
  return schema.format === 'date-time' || name === 'from' || name === 'to';
}

/** Numbers a field that counts (a page's limit, an offset) never takes; as text, other fields may well take them. */
function isCount(name: string, schema: JsonSchema): boolean {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  return type === 'number' || type === 'integer' || name === 'limit' || name === 'offset';
}

/** The hostile values of one field, by what it is; `inUrl` for a path or query parameter. */
function hostileFor(name: string, schema: JsonSchema, inUrl = false): unknown[] {
  const values = inUrl ? [...HOSTILE_STRINGS.filter((v) => v !== big), mid] : [...HOSTILE_STRINGS];
  if (!inUrl || isCount(name, schema)) values.push(...HOSTILE_NUMBERS);
  if (isInstant(name, schema)) values.push(...HOSTILE_INSTANTS);
  if (name === 'cursor') values.push(...HOSTILE_CURSORS);
  return values;
}

interface Case {
  what: string;
  responses: Record<string, unknown>;
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
}

/** Every case of one operation: each path parameter, query parameter, header and body field in turn. */
function casesOf(path: string, method: string, op: Operation, ids: Record<string, string>): Case[] {
  const cases: Case[] = [];
  const auth = { authorization: `Bearer ${admin}` };
  const pathWith = (name: string | null, raw: string | null) =>
    path.replace(/\{([^}]+)\}/g, (_, p: string) => (p === name && raw !== null ? raw : encodeURIComponent(ids[`${op.operationId}.${p}`] ?? ids[p] ?? 'sweep')));
  const bodySchema = op.requestBody ? deref(op.requestBody.content['application/json'].schema) : undefined;
  const baseBody = bodySchema ? (sample(bodySchema) as Record<string, unknown>) : undefined;
  const bodyText = (body: unknown) => (body === undefined ? undefined : JSON.stringify(body));
  const jsonHeaders = baseBody === undefined ? auth : { ...auth, 'content-type': 'application/json' };
  const base = { method: method.toUpperCase(), headers: jsonHeaders, body: bodyText(baseBody), responses: op.responses };
  for (const p of op.parameters) {
    if (p.in === 'path') {
      for (const raw of HOSTILE_SEGMENTS) cases.push({ ...base, what: `${op.operationId} path ${p.name}=${raw.slice(0, 20)}`, url: pathWith(p.name, raw) });
      for (const value of hostileFor(p.name, p.schema, true))
        cases.push({ ...base, what: `${op.operationId} path ${p.name}=${String(value).slice(0, 20)}`, url: pathWith(p.name, encodeAny(String(value))) });
    } else if (p.in === 'query') {
      for (const raw of HOSTILE_QUERY_TEXT) cases.push({ ...base, what: `${op.operationId} query ${p.name}=${raw}`, url: `${pathWith(null, null)}?${p.name}=${raw}` });
      for (const value of hostileFor(p.name, p.schema, true))
        cases.push({ ...base, what: `${op.operationId} query ${p.name}=${String(value).slice(0, 20)}`, url: `${pathWith(null, null)}?${p.name}=${encodeAny(String(value))}` });
    } else if (p.in === 'header') {
      // A header carries no NUL or surrogate (HTTP refuses them before the API sees them); anything else no key is.
      for (const value of ['%FF', 'has space', 'x'.repeat(200), '-1'.repeat(60)])
        cases.push({ ...base, what: `${op.operationId} header ${p.name}=${value.slice(0, 20)}`, url: pathWith(null, null), headers: { ...jsonHeaders, [p.name]: value } });
    }
  }
  if (bodySchema && baseBody) {
    for (const value of [...HOSTILE_STRINGS, ...HOSTILE_NUMBERS, [big], { [big]: 1 }, { 'nul\u0000': 1 }])
      cases.push({ ...base, what: `${op.operationId} body=${JSON.stringify(value).slice(0, 20)}`, url: pathWith(null, null), body: bodyText(value) });
    for (const [name, schema] of Object.entries(bodySchema.properties ?? {})) {
      for (const value of hostileFor(name, deref(schema)))
        cases.push({ ...base, what: `${op.operationId} body.${name}=${String(value).slice(0, 20)}`, url: pathWith(null, null), body: bodyText({ ...baseBody, [name]: value }) });
    }
    // A body of another type is refused without being read.
    cases.push({ ...base, what: `${op.operationId} body as text/plain`, url: pathWith(null, null), headers: { ...auth, 'content-type': 'text/plain' } });
    cases.push({ ...base, what: `${op.operationId} body as a form`, url: pathWith(null, null), headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' } });
  }
  return cases;
}

const snapshot = () => storeSnapshot(api.store);

beforeAll(async () => {
  api = await startApiHttp();
  admin = await api.tokenFor('admin');
  doc = (await (await fetch(`${api.url}/openapi.json`)).json()) as typeof doc;
  // A fresh database and every route module: slow on a loaded machine.
}, 60_000);
afterAll(async () => {
  await api?.stop();
});

describe('HTTP API: hostile values in every field of every documented endpoint', () => {
  it('answers each 4xx in the documented shape, and writes nothing', async () => {
    await api.store.putDag({ id: 'sweep', params: { note: { type: 'string' } }, tasks: [{ id: 'one', type: 'noop' }] }, 4);
    const run = await api.store.triggerRun(parseDagId('sweep'));
    await api.store.setResourceLimit({ name: 'sweep', capacity: 1 });
    const ids: Record<string, string> = { id: 'sweep', name: 'sweep', 'getRun.id': run.id, 'requestRunAction.id': run.id, 'getRunAction.id': '1' };
    const before = await snapshot();

    const operations = Object.entries(doc.paths).flatMap(([path, item]) => Object.entries(item).map(([method, op]) => ({ path, method, op })));
    expect(operations.length).toBeGreaterThanOrEqual(21);
    const cases = operations.flatMap(({ path, method, op }) => casesOf(path, method, op, ids));
    const faults: string[] = [];
    const seen = new Set<string>();
    // A few at a time: the sweep is many small requests, each a round trip to the store at most.
    for (let i = 0; i < cases.length; i += 8) {
      await Promise.all(
        cases.slice(i, i + 8).map(async (c) => {
          const res = await fetch(`${api.url}${c.url}`, { method: c.method, headers: c.headers, body: c.body });
          const text = await res.text();
          seen.add(c.what.split(' ')[0]!);
          if (res.status < 400 || res.status >= 500) return void faults.push(`${c.what}: ${res.status} ${text.slice(0, 200)}`);
          let body: unknown;
          try {
            body = JSON.parse(text);
          } catch {
            return void faults.push(`${c.what}: ${res.status} is not JSON: ${text.slice(0, 200)}`);
          }
          const shape = body as { code?: unknown; message?: unknown; issues?: unknown };
          const keys = Object.keys(shape).every((k) => ['code', 'message', 'issues'].includes(k));
          if (typeof shape.code !== 'string' || typeof shape.message !== 'string' || !keys) faults.push(`${c.what}: not the error shape: ${text.slice(0, 200)}`);
          if (!(String(res.status) in c.responses)) faults.push(`${c.what}: ${res.status} is not an answer its operation documents`);
          const leak = leakIn(text);
          if (leak) faults.push(`${c.what}: leaks ${leak}`);
        }),
      );
    }
    expect(faults).toEqual([]);
    expect(cases.length).toBeGreaterThan(400);
    // Every operation that takes any input was swept (the rest have no field to send a value in).
    const withInput = operations.filter((o) => o.op.parameters.length > 0 || o.op.requestBody !== undefined);
    expect(withInput.length).toBeGreaterThanOrEqual(15);
    expect([...seen].sort()).toEqual(withInput.map((o) => o.op.operationId).sort());
    expect(await snapshot()).toBe(before);
  });
});

describe('console routes outside the document: hostile values in every path segment', () => {
  it('answers each 4xx in its error shape, with or without a credential, and writes nothing', async () => {
    // Every route file under /api/ but the documented API (swept above) and tRPC (swept
    // procedure by procedure in bad-bytes.test.ts), listed from its folders.
    const others = appRoutes().filter((r) => r.kind === 'route' && r.path.startsWith('/api/') && !r.path.startsWith('/api/v1/') && r.path !== '/api/trpc/[trpc]');
    expect(others.map((r) => r.path)).toContain('/api/jobs/[jobId]/attempts/[fence]/logs');
    const before = await snapshot();
    const values = [
      ...HOSTILE_SEGMENTS,
      ...[...HOSTILE_STRINGS.filter((v) => v !== big), mid, ...HOSTILE_NUMBERS].map((v) => encodeAny(String(v))),
      '0',
      '-1',
      '1e3',
      '9223372036854775808',
      '1'.repeat(40),
    ];
    const faults: string[] = [];
    let sent = 0;
    for (const route of others) {
      const module = (await import(/* @vite-ignore */ route.absolute)) as Record<string, unknown>;
      const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].filter((m) => typeof module[m] === 'function');
      expect(methods.length, route.path).toBeGreaterThan(0);
      for (const method of methods)
        for (const param of route.params)
          for (const raw of values)
            for (const headers of [{ authorization: `Bearer ${admin}` }, {}]) {
              const url = route.path.replace(/\[(\w+)\]/g, (_, p: string) => (p === param ? raw : '1'));
              const what = `${method} ${route.path} ${param}=${raw.slice(0, 20)}${'authorization' in headers ? '' : ' unsigned'}`;
              sent++;
              const res = await fetch(`${api.origin}${url}`, { method, headers });
              const text = await res.text();
              if (res.status < 400 || res.status >= 500) {
                faults.push(`${what}: ${res.status} ${text.slice(0, 200)}`);
                continue;
              }
              let body: { code?: unknown; message?: unknown; error?: { code?: unknown; message?: unknown } };
              try {
                body = JSON.parse(text) as typeof body;
              } catch {
                faults.push(`${what}: ${res.status} is not JSON: ${text.slice(0, 200)}`);
                continue;
              }
              // The API's shape when the proxy refuses the path, else the console's ({ error: { code, message } }).
              const shaped = body.error ?? body;
              if (typeof shaped.code !== 'string' || typeof shaped.message !== 'string') faults.push(`${what}: not an error shape: ${text.slice(0, 200)}`);
              const leak = leakIn(text);
              if (leak) faults.push(`${what}: leaks ${leak}`);
            }
    }
    expect(faults).toEqual([]);
    expect(sent).toBeGreaterThan(50);
    expect(await snapshot()).toBe(before);
  });
});
