import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore } from '@fenceline/db';
import { hashPassword } from '@fenceline/db/people';
import type { UserName } from '@fenceline/core';

// A database of this file's own, named before the console reads its settings (once).
const ADMIN_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const DB_NAME = `fenceline_test_${randomBytes(6).toString('hex')}`;
process.env.DATABASE_URL = await createDatabase(ADMIN_URL, DB_NAME);
const { GET } = await import('../src/app/api/trpc/[trpc]/route');
const { appRouter } = await import('../src/server/routers/app');
const { consoleStore } = await import('../src/server/store');
const { contextAs } = await import('./support/contexts');

const PASSWORD = 'a password for input error tests';

/** A signed-in session cookie, from the sign-in procedure itself. */
async function sessionCookie(): Promise<string> {
  const store = await openStore({ databaseUrl: process.env.DATABASE_URL!, max: 1 });
  await store.createUser({ name: 'input-errors' as UserName, role: 'operator', passwordHash: await hashPassword(PASSWORD) });
  await store.close();
  const ctx = contextAs(null);
  await appRouter.createCaller(ctx).auth.signIn({ name: 'input-errors', password: PASSWORD });
  return (ctx.resHeaders.get('set-cookie') ?? '').split(';')[0]!;
}

afterAll(async () => {
  await (await consoleStore()).close();
  await dropDatabase(ADMIN_URL, DB_NAME);
});

describe('console: refused input', () => {
  it('is answered as "field: problem", not as the schema issues in JSON', async () => {
    const input = encodeURIComponent(JSON.stringify({ json: { jobId: 'abc' } }));
    const res = await GET(new Request(`http://console.test/api/trpc/runs.result?input=${input}`, { headers: { cookie: await sessionCookie() } }));
    expect(res.status).toBe(400);
    const body = (await res.json()) as { error: { json: { message: string; data: { code: string } } } };
    expect(body.error.json.data.code).toBe('BAD_REQUEST');
    expect(body.error.json.message).toBe('jobId: must be a numeric id');
  });
});
