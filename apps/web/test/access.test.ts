import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';

// The console reads its tokens from the environment once; these are this test's own.
process.env.DATABASE_URL ??= 'postgres://postgres@127.0.0.1:5432/postgres';
process.env.FENCELINE_OPERATOR_TOKEN = 'operator-token-for-access-tests';
process.env.FENCELINE_VIEWER_TOKEN = 'viewer-token-for-access-tests';
const WORKER_TOKEN = 'worker-token-for-access-tests';
import { appRouter } from '../src/server/routers/app';
import type { Context } from '../src/server/trpc';

/** Sign-in itself is the one door open to everybody. */
const OPEN = new Set(['auth.signIn', 'auth.signOut', 'auth.whoami']);

function call(ctx: Context, path: string, input?: unknown): Promise<unknown> {
  const caller = appRouter.createCaller(ctx) as unknown as Record<string, Record<string, (input?: unknown) => Promise<unknown>>>;
  const [ns, name] = path.split('.') as [string, string];
  return caller[ns]![name]!(input);
}

const anonymous = (): Context => ({ role: null, resHeaders: new Headers(), secure: false });

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (err) {
    return err instanceof TRPCError ? err.code : `not a TRPCError: ${String(err)}`;
  }
}

const procedures = Object.entries(appRouter._def.procedures as Record<string, { _def: { type: string; inputs: unknown[] } }>);

describe('console access control', () => {
  it('has procedures to check', () => {
    expect(procedures.length).toBeGreaterThan(10);
  });

  it('refuses every procedure but sign-in to a caller without a session', async () => {
    for (const [path] of procedures) {
      if (OPEN.has(path)) continue;
      expect(await codeOf(call({ role: null, resHeaders: new Headers(), secure: false }, path)), path).toBe('UNAUTHORIZED');
    }
  });

  it('refuses every mutation but sign-in and sign-out to a viewer', async () => {
    for (const [path, proc] of procedures) {
      if (OPEN.has(path) || proc._def.type !== 'mutation') continue;
      expect(await codeOf(call({ role: 'viewer', resHeaders: new Headers(), secure: false }, path)), path).toBe('FORBIDDEN');
    }
  });

  it('refuses malformed input to every procedure that takes input with a 400-class error, before any handler runs', async () => {
    let checked = 0;
    for (const [path, proc] of procedures) {
      if (proc._def.inputs.length === 0) continue;
      checked++;
      // An operator session, so only the input can be the reason for the refusal.
      expect(await codeOf(call({ role: 'operator', resHeaders: new Headers(), secure: false }, path, 'not an object at all')), path).toBe('BAD_REQUEST');
    }
    expect(checked).toBeGreaterThan(5);
  });

  it('does not let a worker token sign in to the console', async () => {
    expect(await codeOf(call(anonymous(), 'auth.signIn', { token: WORKER_TOKEN }))).toBe('UNAUTHORIZED');
    const ctx = anonymous();
    expect(await call(ctx, 'auth.signIn', { token: 'viewer-token-for-access-tests' })).toEqual({ role: 'viewer' });
    const cookie = ctx.resHeaders.get('set-cookie') ?? '';
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Strict/i);
    expect(cookie).not.toContain('viewer-token-for-access-tests');
  });
});
