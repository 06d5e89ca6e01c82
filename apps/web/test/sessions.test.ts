import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { UserName } from '@fenceline/core';
import { hashPassword } from '@fenceline/db/people';
import { registerSecret } from '../../../test/support/run-logs';
import { callProcedure, cookieOf, startConsoleHttp } from './support/console-http';

const PASSWORD = 'correct horse battery staple';
registerSecret("the sessions test's password", PASSWORD);
let consoleHttp: Awaited<ReturnType<typeof startConsoleHttp>>;

beforeAll(async () => {
  consoleHttp = await startConsoleHttp();
  const hash = await hashPassword(PASSWORD);
  for (const [name, role] of [
    ['ada', 'admin'],
    ['otto', 'operator'],
    ['vera', 'viewer'],
    ['lock', 'viewer'],
  ] as const) {
    await consoleHttp.store.createUser({ name: name as UserName, role, passwordHash: hash });
  }
});
afterAll(async () => {
  await consoleHttp?.stop();
});

const signIn = (name: string, password: string, headers: Record<string, string> = {}) =>
  callProcedure(consoleHttp.url, 'auth.signIn', { mutation: true, input: { name, password }, headers: { 'x-forwarded-for': `10.1.0.${name.length}`, ...headers } });
const whoami = (cookie: string) => callProcedure(consoleHttp.url, 'auth.whoami', { headers: { cookie } });
const dagList = (headers: Record<string, string>) => callProcedure(consoleHttp.url, 'dags.list', { input: {}, headers });

describe('console sessions over HTTP', () => {
  it('signs in by name and password; a wrong one is refused alike for a known and an unknown name', async () => {
    expect((await signIn('otto', 'not the password')).error).toEqual({ code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: wrong user name or password' });
    expect((await signIn('nobody', PASSWORD)).error).toEqual({ code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: wrong user name or password' });
    const ok = await signIn('otto', PASSWORD);
    expect(ok.data).toEqual({ role: 'operator', name: 'otto' });
    const cookie = ok.headers.get('set-cookie')!;
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/SameSite=Strict/);
    expect(cookie).not.toMatch(/Secure/);
    expect(cookie).not.toContain(PASSWORD);
    expect((await whoami(cookieOf(ok))).data).toEqual({ role: 'operator', name: 'otto', via: 'session' });
    // The refused attempts are in the audit log, with where they came from.
    const refused = await consoleHttp.store.listAudit({ action: 'signin.refused' });
    expect(refused.map((e) => e.target)).toEqual(expect.arrayContaining(['otto', 'nobody']));
    expect(refused.find((e) => e.target === 'otto')?.source).toBe('10.1.0.4');
  });

  it('sets the Secure flag when the console is reached over https through a proxy', async () => {
    const answer = await signIn('vera', PASSWORD, { 'x-forwarded-proto': 'https' });
    expect(answer.headers.get('set-cookie')).toMatch(/; Secure/);
    // A chain of proxies lists the client's side first, in whatever case it was written.
    const chained = await signIn('vera', PASSWORD, { 'x-forwarded-proto': 'HTTPS, http' });
    expect(chained.headers.get('set-cookie')).toMatch(/; Secure/);
    const plain = await signIn('vera', PASSWORD, { 'x-forwarded-proto': 'http' });
    expect(plain.headers.get('set-cookie')).not.toMatch(/Secure/);
  });

  it('ends the session on the server at sign-out, so a copied cookie stops working', async () => {
    const cookie = cookieOf(await signIn('otto', PASSWORD));
    const copy = cookie;
    expect((await dagList({ cookie: copy })).status).toBe(200);
    const out = await callProcedure(consoleHttp.url, 'auth.signOut', { mutation: true, headers: { cookie } });
    expect(out.status).toBe(200);
    expect((await dagList({ cookie: copy })).status).toBe(401);
    expect((await whoami(copy)).data).toEqual({ role: null, name: null, via: null });
  });

  it('lets an admin revoke every session of a user, and ends them when the user is demoted or disabled', async () => {
    const admin = cookieOf(await signIn('ada', PASSWORD));
    const users = (await callProcedure(consoleHttp.url, 'users.list', { headers: { cookie: admin } })).data as { id: string; name: string }[];
    const otto = users.find((u) => u.name === 'otto')!;
    const [first, second] = [cookieOf(await signIn('otto', PASSWORD)), cookieOf(await signIn('otto', PASSWORD))];
    const revoked = await callProcedure(consoleHttp.url, 'users.revokeSessions', {
      mutation: true,
      input: { userId: otto.id },
      headers: { cookie: admin, 'user-agent': 'admin-browser' },
    });
    // Both new sessions, and the ones left from the tests before.
    const count = (revoked.data as { revoked: number }).revoked;
    expect(count).toBeGreaterThanOrEqual(2);
    expect((await dagList({ cookie: first })).status).toBe(401);
    expect((await dagList({ cookie: second })).status).toBe(401);
    const [entry] = await consoleHttp.store.listAudit({ action: 'sessions.revoked' });
    expect(entry).toMatchObject({ actorKind: 'user', actor: 'ada', target: 'otto', details: { revoked: count }, userAgent: 'admin-browser' });

    const demoted = cookieOf(await signIn('otto', PASSWORD));
    await callProcedure(consoleHttp.url, 'users.setRole', { mutation: true, input: { userId: otto.id, role: 'viewer' }, headers: { cookie: admin } });
    expect((await dagList({ cookie: demoted })).status).toBe(401);
    const disabled = cookieOf(await signIn('otto', PASSWORD));
    expect((await whoami(disabled)).data).toMatchObject({ role: 'viewer' });
    await callProcedure(consoleHttp.url, 'users.setDisabled', { mutation: true, input: { userId: otto.id, disabled: true }, headers: { cookie: admin } });
    expect((await dagList({ cookie: disabled })).status).toBe(401);
    expect((await signIn('otto', PASSWORD)).status).toBe(401);
    // An admin cannot lock themselves out by a slip.
    const self = users.find((u) => u.name === 'ada')!;
    expect((await callProcedure(consoleHttp.url, 'users.setDisabled', { mutation: true, input: { userId: self.id, disabled: true }, headers: { cookie: admin } })).status).toBe(
      400,
    );
  });

  it('limits failed sign-ins per user name, saying when to try again, even for the right password', async () => {
    for (let i = 0; i < 5; i++) expect((await signIn('lock', `wrong ${i}`, { 'x-forwarded-for': `10.2.0.${i}` })).status).toBe(401);
    const limited = await signIn('lock', PASSWORD, { 'x-forwarded-for': '10.2.0.99' });
    expect(limited.status).toBe(429);
    expect(limited.error?.message).toMatch(/^TOO_MANY_REQUESTS: too many sign-in attempts, try again in \d+ s$/);
    expect(limited.headers.get('set-cookie')).toBeNull();
  });

  it('limits failed sign-ins per client address across names', async () => {
    for (let i = 0; i < 20; i++) await signIn(`guess${i}`, 'guess', { 'x-forwarded-for': '10.3.0.1' });
    expect((await signIn('ada', PASSWORD, { 'x-forwarded-for': '10.3.0.1' })).status).toBe(429);
    expect((await signIn('ada', PASSWORD, { 'x-forwarded-for': '10.3.0.2' })).status).toBe(200);
  });

  it('accepts a personal API token as Bearer, at its role, until it is revoked', async () => {
    const admin = cookieOf(await signIn('ada', PASSWORD));
    const created = await callProcedure(consoleHttp.url, 'tokens.create', { mutation: true, input: { name: 'ci', role: 'viewer', expiresInDays: 7 }, headers: { cookie: admin } });
    const { token, secret } = created.data as { token: { id: string; role: string }; secret: string };
    expect(secret).toMatch(/^flt_/);
    expect(token.role).toBe('viewer');
    const bearer = { authorization: `Bearer ${secret}` };
    expect((await dagList(bearer)).status).toBe(200);
    expect((await callProcedure(consoleHttp.url, 'auth.whoami', { headers: bearer })).data).toEqual({ role: 'viewer', name: 'ada', via: 'token' });
    // Scoped to viewer: a trigger is refused even though its owner is an admin.
    expect((await callProcedure(consoleHttp.url, 'dags.trigger', { mutation: true, input: { id: 'x' }, headers: bearer })).status).toBe(403);
    // The secret is shown once: the list carries no secret or hash.
    const listed = await callProcedure(consoleHttp.url, 'tokens.list', { headers: { cookie: admin } });
    expect(JSON.stringify(listed.data)).not.toContain(secret.slice(4));
    await callProcedure(consoleHttp.url, 'tokens.revoke', { mutation: true, input: { tokenId: token.id }, headers: { cookie: admin } });
    expect((await dagList(bearer)).status).toBe(401);
    expect((await consoleHttp.store.listAudit({ actor: 'ada' })).map((e) => e.action)).toEqual(expect.arrayContaining(['token.created', 'token.revoked']));
  });
});
