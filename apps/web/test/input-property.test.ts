import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { auditStore } from '@fenceline/db/audit';
import { leakIn, toJsonText } from '../../../test/support/bad-input';
import { hostileInput } from '../../../test/support/hostile-input';
import { basesProblems } from '../../../test/support/procedure-bases';
import { signInThroughRoute } from './support/route-sign-in';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
const DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
process.env.DATABASE_URL = DATABASE_URL;
const { GET, POST } = await import('../src/app/api/trpc/[trpc]/route');
const { appRouter } = await import('../src/server/routers/app');
const { consoleStore } = await import('../src/server/store');
const { CONSOLE_BASES } = await import('./console-bases');

const procedures = appRouter._def.procedures as Record<string, { _def: { type: string } }>;

async function send(path: string, input: unknown, cookie: string): Promise<{ status: number; text: string }> {
  const body = toJsonText({ json: input });
  const res =
    procedures[path]!._def.type === 'query'
      ? await GET(new Request(`http://console.test/api/trpc/${path}?input=${encodeURIComponent(body)}`, { headers: { cookie } }))
      : await POST(new Request(`http://console.test/api/trpc/${path}`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body }));
  return { status: res.status, text: await res.text() };
}

/**
 * Arbitrary JSON, hostile strings and deep nesting sent to every console procedure
 * (enumerated from the router, so one added later is covered), as an operator and as a
 * viewer, each beside another caller's requests that carry a canary the store never keeps:
 * every answer is a 4xx or a success, none carries SQL, a stack or the canary, and the
 * store's audit finds nothing wrong.
 */
describe('console: hostile input to every procedure', () => {
  let store: SqlStore;
  beforeAll(async () => {
    store = await openStore({ databaseUrl: DATABASE_URL, max: 2 });
    await store.initCluster(4);
    await store.putDag({ id: 'sweep', params: { note: { type: 'string' } }, tasks: [{ id: 'one', type: 'noop' }] }, 4);
  });
  afterAll(async () => {
    await store?.close();
    await (await consoleStore()).close();
    await dropDatabase(ADMIN_URL, DB_NAME);
  });

  it('has a valid input for every procedure that takes one, so each of its fields is varied', () => {
    expect(basesProblems(procedures, CONSOLE_BASES)).toEqual([]);
  });

  it('is answered 4xx or success, never 5xx, never with another caller’s data', async () => {
    const cookies = {
      admin: await signInThroughRoute(POST, store, 'admin'),
      operator: await signInThroughRoute(POST, store, 'operator'),
      viewer: await signInThroughRoute(POST, store, 'viewer'),
    };
    expect(cookies.operator).toMatch(/=/);
    // The other caller has a session of its own, which no hostile call (a sign-out with one
    // of the cookies above, say) can end.
    const bystander = await signInThroughRoute(POST, store, 'viewer');
    const canary = `canary${randomBytes(6).toString('hex')}`;
    const call = fc
      .constantFrom(...Object.keys(procedures))
      .chain((path) =>
        fc.record({ path: fc.constant(path), input: hostileInput(CONSOLE_BASES[path] ?? {}), role: fc.constantFrom('admin' as const, 'operator' as const, 'viewer' as const) }),
      );
    await fc.assert(
      fc.asyncProperty(call, async ({ path, input, role }) => {
        // Another caller's requests, in flight at the same time, whose canary the store never
        // keeps (a refused sign-in's name is audited for admins to see; its password is not).
        const others = Promise.all([send('dags.get', { id: `${canary}-dag` }, bystander), send('auth.signIn', { name: 'no-such-user', password: canary }, '')]);
        const [answer, [other]] = await Promise.all([send(path, input, cookies[role]), others]);
        expect(answer.status, `${path}: ${answer.text.slice(0, 300)}`).toBeLessThan(500);
        expect(leakIn(answer.text)).toBeNull();
        expect(answer.text).not.toContain(canary);
        expect(other!.status).toBe(404);
      }),
      { numRuns: 250, seed: Number(process.env.FENCELINE_PROPERTY_SEED ?? Date.now() % 1_000_000) },
    );
    const audit = await auditStore(DATABASE_URL);
    expect(audit.duplicateRuns).toEqual([]);
    expect(audit.resultsFromRevokedHolders).toEqual([]);
    expect(audit.doubleAccepted).toEqual([]);
  });
});
