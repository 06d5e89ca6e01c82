import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { LIMITS } from '@fenceline/core';
import { signInThroughRoute } from './support/route-sign-in';
import { BAD_VALUES, deeplyNestedText, DEEP, leafPaths, leakIn, replaceAt, toJsonText } from '../../../test/support/bad-input';
import { basesProblems } from '../../../test/support/procedure-bases';
import { storeSnapshot } from './support/store-snapshot';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
process.env.DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
const { GET, POST } = await import('../src/app/api/trpc/[trpc]/route');
const { appRouter } = await import('../src/server/routers/app');
const { consoleStore } = await import('../src/server/store');
const { CONSOLE_BASES: BASES } = await import('./console-bases');

/** Numbers no field takes: below every minimum, past every maximum, past what a double holds exactly. */
const HOSTILE_NUMBERS = [-1, -(2 ** 63), -1e308, 1e308, 2 ** 64];

const procedures = Object.entries(appRouter._def.procedures as Record<string, { _def: { type: string } }>);

/** Signed in as a new user of `role`; the store is the test file's own. */
let signedIn: (role: 'admin' | 'operator' | 'viewer') => Promise<string>;

/** One call through the console's route handler, as the browser makes it (superjson's wire form). */
async function call(path: string, type: string, input: unknown, cookie: string): Promise<{ status: number; text: string }> {
  const body = toJsonText({ json: input });
  const res =
    type === 'query'
      ? await GET(new Request(`http://console.test/api/trpc/${path}?input=${encodeURIComponent(body)}`, { headers: { cookie } }))
      : await POST(new Request(`http://console.test/api/trpc/${path}`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body }));
  return { status: res.status, text: await res.text() };
}

describe('console: bad bytes in any input', () => {
  let store: SqlStore;
  beforeAll(async () => {
    store = await openStore({ databaseUrl: process.env.DATABASE_URL!, max: 2 });
    await store.initCluster(4);
    await store.putDag({ id: 'sweep', params: { note: { type: 'string' } }, tasks: [{ id: 'one', type: 'noop' }] }, 4);
    signedIn = (role) => signInThroughRoute(POST, store, role);
  });
  afterAll(async () => {
    await store?.close();
    await (await consoleStore()).close();
    await dropDatabase(ADMIN_URL, DB_NAME);
  });

  it('has a valid input for every procedure that takes one, so each of its fields is swept', () => {
    expect(basesProblems(appRouter._def.procedures, BASES)).toEqual([]);
  });

  it('answers a NUL, a lone surrogate or 5,000-deep nesting in any field of any procedure with a 4xx, never SQL or a stack', async () => {
    expect(procedures.length).toBeGreaterThan(10);
    const cookies = { admin: await signedIn('admin'), operator: await signedIn('operator'), viewer: await signedIn('viewer') };
    expect(cookies.operator).toMatch(/=/);
    const before = await storeSnapshot(store);
    const faults: string[] = [];
    let refused = 0;
    for (const [path, procedure] of procedures) {
      const base = BASES[path] ?? {};
      const variants: { at: string; input: unknown }[] = [];
      for (const bad of BAD_VALUES) {
        variants.push({ at: '(root)', input: bad });
        for (const leaf of leafPaths(base)) if (leaf.length > 0) variants.push({ at: leaf.join('.'), input: replaceAt(base, leaf, bad) });
      }
      for (const { at, input } of variants) {
        for (const role of ['admin', 'operator', 'viewer'] as const) {
          const answer = await call(path, procedure._def.type, input, cookies[role]);
          const what = `${path} as ${role} at ${at}: ${answer.status}`;
          if (answer.status >= 500) faults.push(`${what} ${answer.text.slice(0, 300)}`);
          const leak = leakIn(answer.text);
          if (leak) faults.push(`${what} leaks ${leak}`);
          if (answer.status >= 400 && answer.status < 500) refused++;
        }
      }
    }
    expect(faults).toEqual([]);
    expect(refused).toBeGreaterThan(100);
    // Nothing refused was stored, anywhere.
    expect(await storeSnapshot(store)).toBe(before);
  });

  it('answers 100 KB or a negative or huge number in any field, and impossible instants and edited cursors where they are read, with a 4xx in the error shape', async () => {
    const cookie = await signedIn('admin');
    const before = await storeSnapshot(store);
    const cursorOf = (plain: string) => Buffer.from(plain).toString('base64url');
    const faults: string[] = [];
    let refused = 0;
    for (const [path, procedure] of procedures) {
      const base = BASES[path] ?? {};
      for (const leaf of leafPaths(base)) {
        if (leaf.length === 0) continue;
        const name = String(leaf[leaf.length - 1]);
        // A task's config is free-form JSON, where any finite number is data like any other.
        const freeForm = leaf.includes('config');
        const values: unknown[] = ['x'.repeat(100 * 1024), ...(freeForm ? [] : HOSTILE_NUMBERS)];
        if (name === 'from' || name === 'to') values.push('0000-01-01T00:00:00Z', '2026-02-30T00:00:00Z', '+275760-09-13T00:00:00Z');
        if (name === 'cursor') values.push(cursorOf('r1|newest|after|0000-01-01T00:00:00.000000Z|1'), cursorOf('r1|newest|after|2026-02-30T00:00:00.000000Z|1'));
        for (const value of values) {
          const answer = await call(path, procedure._def.type, replaceAt(base, leaf, value), cookie);
          const what = `${path} at ${leaf.join('.')}: ${answer.status}`;
          const error = (JSON.parse(answer.text) as { error?: { json?: { message?: unknown; data?: { code?: unknown } } } }).error?.json;
          if (answer.status < 400 || answer.status >= 500) faults.push(`${what} ${answer.text.slice(0, 200)}`);
          else if (typeof error?.message !== 'string' || typeof error.data?.code !== 'string') faults.push(`${what} not the error shape`);
          else refused++;
        }
      }
    }
    // The runs list's cursor and instants are swept too (its base has from and to; a cursor is added here).
    for (const cursor of [cursorOf('r1|newest|after|0000-01-01T00:00:00.000000Z|1'), `${cursorOf('r1|newest|after|2026-01-01T00:00:00.000000Z|1')}A`]) {
      const answer = await call('runs.list', 'query', { cursor }, cookie);
      if (answer.status !== 400) faults.push(`runs.list cursor ${cursor}: ${answer.status} ${answer.text.slice(0, 200)}`);
    }
    expect(faults).toEqual([]);
    expect(refused).toBeGreaterThan(40);
    expect(await storeSnapshot(store)).toBe(before);
  });

  it('answers bad text in an id from an address NOT_FOUND, and in the search or a DAG spec 400 naming the field', async () => {
    const cookie = await signedIn('operator');
    // An id from a page's address that no DAG or run can have is answered NOT_FOUND, as the page shows it, and never read.
    for (const [path, input] of [
      ['dags.get', { id: 'has space' }],
      ['dags.versions', { id: 'a/b' }],
      ['runs.timeline', { runId: '01' }],
    ] as const) {
      const answer = await call(path, 'query', input, cookie);
      expect(answer.status, answer.text).toBe(404);
      expect(leakIn(answer.text)).toBeNull();
    }
    // Text no store can hold is refused by the one boundary check first, naming the field.
    for (const [path, input, field] of [
      ['dags.get', { id: 'nul\u0000' }, 'id'],
      ['dags.versions', { id: 'lone\ud800' }, 'id'],
      ['runs.timeline', { runId: '1\u0000' }, 'runId'],
    ] as const) {
      const answer = await call(path, 'query', input, cookie);
      expect(answer.status, answer.text).toBe(400);
      expect(JSON.parse(answer.text).error.json.message).toMatch(new RegExp(`^${field}: must not contain`));
    }
    const search = await call('dags.list', 'query', { search: 'nul\u0000' }, cookie);
    expect(search.status, search.text).toBe(400);
    expect(JSON.parse(search.text).error.json.message).toMatch(/^search: must not contain a NUL/);
    // Nested past the schemas' limit but not so far that the request is refused unread.
    const config = { deep: JSON.parse(deeplyNestedText(LIMITS.maxJsonDepth + 10)) as unknown };
    const spec = await call('dags.save', 'mutation', { spec: { id: 'bad-name', name: 'Nested', tasks: [{ id: 'one', type: 'noop', config }] } }, cookie);
    expect(spec.status, spec.text).toBe(400);
    const refusal = JSON.parse(spec.text).error.json as { message: string; data: { fenceline: { code: string; details: { issues: { path: string }[] } } | null } };
    expect(refusal.data.fenceline?.code).toBe('INVALID_DAG');
    expect(refusal.data.fenceline!.details.issues.map((i) => i.path).join(' ')).toMatch(/tasks\.0\.config\.deep/);
    // Text no store can keep, anywhere in a spec, is refused by the boundary check, naming its place.
    const lone = await call('dags.save', 'mutation', { spec: { id: 'bad-name', name: 'lone\ud800', tasks: [{ id: 'one', type: 'noop' }] } }, cookie);
    expect(lone.status, lone.text).toBe(400);
    expect(JSON.parse(lone.text).error.json.message).toMatch(/^spec\.name: must not contain a lone UTF-16 surrogate/);
    // Far deeper input is refused before anything reads it, naming the input.
    const deep = await call('dags.save', 'mutation', { spec: { id: 'bad-name', tasks: [{ id: 'one', type: 'noop', config: { deep: DEEP } }] } }, cookie);
    expect(deep.status, deep.text).toBe(400);
    expect(JSON.parse(deep.text).error.json.message).toMatch(/^input: must not be nested more than/);
    await expect(store.getDag('bad-name' as never)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  it('answers a body over the limit 413 also when it comes without its length', async () => {
    const cookie = await signedIn('operator');
    const body = JSON.stringify({ json: { spec: { id: 'huge', name: 'x'.repeat(LIMITS.maxSpecBytes + 128 * 1024), tasks: [] } } });
    const req = new Request('http://console.test/api/trpc/dags.save', { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body });
    expect(req.headers.get('content-length')).toBeNull();
    const res = await POST(req);
    expect(res.status).toBe(413);
    await expect(store.getDag('huge' as never)).rejects.toMatchObject({ code: 'NOT_FOUND' });
  });

  // Last: it closes the console's connection pool.
  it('answers an unexpected failure with an opaque id only, and logs its detail under that id', async () => {
    const cookie = await signedIn('viewer');
    await (await consoleStore()).close();
    const logged: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void logged.push(args.map(String).join(' ')));
    try {
      const answer = await call('dags.list', 'query', { search: 'sweep' }, cookie);
      expect(answer.status, answer.text).toBe(500);
      const message = (JSON.parse(answer.text) as { error: { json: { message: string } } }).error.json.message;
      const id = /^internal error; id ([0-9a-f]{16})$/.exec(message)?.[1];
      expect(id, message).toBeDefined();
      expect(leakIn(answer.text)).toBeNull();
      expect(answer.text).not.toMatch(/stack|dags d|ilike/i);
      const entries = logged.filter((line) => line.includes(id!));
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatch(/dags\.list/);
    } finally {
      spy.mockRestore();
    }
  });
});
