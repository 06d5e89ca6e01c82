import { describe, expect, it } from 'vitest';

// The console reads its tokens from the environment once; these are this test's own.
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.FENCELINE_OPERATOR_TOKEN = 'operator-token-for-input-error-tests';
process.env.FENCELINE_VIEWER_TOKEN = 'viewer-token-for-input-error-tests';
import { GET } from '../src/app/api/trpc/[trpc]/route';
import { appRouter } from '../src/server/routers/app';

/** A signed-in session cookie, from the sign-in procedure itself. */
async function sessionCookie(): Promise<string> {
  const resHeaders = new Headers();
  await appRouter.createCaller({ role: null, resHeaders, secure: false }).auth.signIn({ token: 'operator-token-for-input-error-tests' });
  return (resHeaders.get('set-cookie') ?? '').split(';')[0]!;
}

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
