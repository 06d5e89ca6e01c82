import { randomBytes } from 'node:crypto';
import type { Role, UserName } from '@fenceline/core';
import type { SqlStore } from '@fenceline/db';
import { hashPassword } from '@fenceline/db/people';
import { registerSecret } from '../../../../test/support/run-logs';

const PASSWORD = 'a password for the console tests';
let passwordHash: Promise<string> | undefined;

/**
 * A user of `role` made in the store, signed in through the console's own route handler:
 * the session cookie (name=value) a browser would send back.
 */
export async function signInThroughRoute(post: (req: Request) => Promise<Response>, store: SqlStore, role: Role): Promise<string> {
  const name = `${role}-${randomBytes(4).toString('hex')}` as UserName;
  passwordHash ??= hashPassword(PASSWORD);
  await store.createUser({ name, role, passwordHash: await passwordHash });
  const res = await post(
    new Request('http://console.test/api/trpc/auth.signIn', {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.9.${randomBytes(1)[0]}.${randomBytes(1)[0]}` },
      body: JSON.stringify({ json: { name, password: PASSWORD } }),
    }),
  );
  const cookie = (res.headers.get('set-cookie') ?? '').split(';')[0]!;
  if (!cookie.includes('=')) throw new Error(`signing in as ${role} failed with ${res.status}: ${await res.text()}`);
  registerSecret(`a console session of a ${role}`, cookie.slice(cookie.indexOf('=') + 1));
  registerSecret("the console tests' password", PASSWORD);
  return cookie;
}
