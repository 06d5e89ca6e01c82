import { TRPCError } from '@trpc/server';
import { describe, expect, it } from 'vitest';
import { appRouter } from '../src/server/routers/app';
import type { Context } from '../src/server/trpc';

/** Sign-in itself is the one door open to everybody. */
const OPEN = new Set(['auth.signIn', 'auth.signOut', 'auth.whoami']);

function call(ctx: Context, path: string): Promise<unknown> {
  const caller = appRouter.createCaller(ctx) as unknown as Record<string, Record<string, (input?: unknown) => Promise<unknown>>>;
  const [ns, name] = path.split('.') as [string, string];
  return caller[ns]![name]!(undefined);
}

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
    return 'OK';
  } catch (err) {
    return err instanceof TRPCError ? err.code : `not a TRPCError: ${String(err)}`;
  }
}

const procedures = Object.entries(appRouter._def.procedures as Record<string, { _def: { type: string } }>);

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
});
