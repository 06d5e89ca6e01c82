import { randomBytes } from 'node:crypto';
import { TRPCError } from '@trpc/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Role } from '@fenceline/core';
import { createDatabase, dropDatabase } from '@fenceline/db';
import { consoleStore } from '../src/server/store';

// The console's store opens lazily on DATABASE_URL: a database of this file's own, so the
// migrations it runs meet no schema another test or an earlier run left behind.
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `fenceline_access_${randomBytes(4).toString('hex')}`;
beforeAll(async () => {
  process.env.DATABASE_URL = await createDatabase(adminUrl, dbName);
});
afterAll(async () => {
  await (await consoleStore()).close();
  await dropDatabase(adminUrl, dbName);
});
import { appRouter } from '../src/server/routers/app';
import type { Context } from '../src/server/trpc';
import { contextAs } from './support/contexts';

/** Sign-in itself is the one door open to everybody. */
const OPEN = new Set(['auth.signIn', 'auth.signOut', 'auth.whoami']);
/** What any signed-in user may change: their own API tokens. */
const OWN = new Set(['tokens.create', 'tokens.revoke']);
/** What only an admin may do: users, and notification channels, which hold secrets and name where the cluster's news goes. */
const ADMIN = new Set(['users.list', 'users.create', 'users.setRole', 'users.setDisabled', 'users.revokeSessions', 'notifications.createChannel', 'notifications.deleteChannel']);

function call(ctx: Context, path: string, input?: unknown): Promise<unknown> {
  const caller = appRouter.createCaller(ctx) as unknown as Record<string, Record<string, (input?: unknown) => Promise<unknown>>>;
  const [ns, name] = path.split('.') as [string, string];
  return caller[ns]![name]!(input);
}

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
  it('has procedures to check, and every admin one is in the router', () => {
    expect(procedures.length).toBeGreaterThan(15);
    const paths = new Set(procedures.map(([path]) => path));
    for (const path of [...ADMIN, ...OWN]) expect(paths.has(path), path).toBe(true);
  });

  it('refuses every procedure but sign-in to a caller without a session', async () => {
    for (const [path] of procedures) {
      if (OPEN.has(path)) continue;
      expect(await codeOf(call(contextAs(null), path)), path).toBe('UNAUTHORIZED');
    }
  });

  it('refuses every mutation but sign-in, sign-out and own tokens to a viewer', async () => {
    for (const [path, proc] of procedures) {
      if (OPEN.has(path) || OWN.has(path) || proc._def.type !== 'mutation') continue;
      expect(await codeOf(call(contextAs('viewer'), path)), path).toBe('FORBIDDEN');
    }
  });

  it('refuses every admin procedure to an operator and a viewer', async () => {
    for (const role of ['viewer', 'operator'] as Role[]) {
      for (const path of ADMIN) expect(await codeOf(call(contextAs(role), path, {})), `${role} ${path}`).toBe('FORBIDDEN');
      // Everyone's tokens are an admin's to list.
      expect(await codeOf(call(contextAs(role), 'tokens.list', { all: true })), role).toBe('FORBIDDEN');
    }
  });

  it('refuses malformed input to every procedure that takes input with a 400-class error, before any handler runs', async () => {
    let checked = 0;
    for (const [path, proc] of procedures) {
      if (proc._def.inputs.length === 0) continue;
      checked++;
      // An admin session, so only the input can be the reason for the refusal.
      expect(await codeOf(call(contextAs('admin'), path, 'not an object at all')), path).toBe('BAD_REQUEST');
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('does not let an API token mint another token, nor anyone a token above their role', async () => {
    const viaToken = contextAs('admin', { tokenId: '7' });
    expect(await codeOf(call(viaToken, 'tokens.create', { name: 'ci', role: 'viewer' }))).toBe('FORBIDDEN');
    expect(await codeOf(call(contextAs('operator'), 'tokens.create', { name: 'ci', role: 'admin' }))).toBe('FORBIDDEN');
  });
});
