import { describe, expect, it } from 'vitest';
import { parseApiTokenId, parseUserId, parseUserName, type Role, type UserName } from '../../people-ids';
import type { ContractContext } from './context';
import { refusedWith, unique } from './fixtures';

const HOUR_MS = 3_600_000;

/** A user name no other test of the run uses (names are lower case). */
function name(prefix: string): UserName {
  return parseUserName(unique(prefix).toLowerCase());
}

/** The store contract's part on users, console sessions and API tokens. */
export function peopleContract(c: ContractContext): void {
  describe('users, sessions and API tokens', () => {
    async function user(role: Role = 'operator') {
      return c.store.createUser({ name: name('user'), role, passwordHash: `hash-${unique('pw')}` });
    }

    it('creates a user once per name and reads its credentials back by name only', async () => {
      const created = await user('viewer');
      // Names whose order differs between byte order and a language's collation.
      const tag = unique('order').toLowerCase();
      for (const n of [`${tag}-b`, `${tag}_a`, `${tag}.c`, `${tag}a`]) await c.store.createUser({ name: parseUserName(n), role: 'viewer', passwordHash: 'h' });
      expect(created).toMatchObject({ role: 'viewer', disabled: false });
      expect(created).not.toHaveProperty('passwordHash');
      const credentials = await c.store.userCredentials({ name: created.name });
      expect(credentials?.id).toBe(created.id);
      expect(credentials?.passwordHash).toMatch(/^hash-/);
      expect(await c.store.userCredentials({ name: name('nobody') })).toBeNull();
      const taken = await refusedWith(c.store.createUser({ name: created.name, role: 'admin', passwordHash: 'other' }), 'INVALID_INPUT');
      expect(taken.details.field).toBe('name');
      expect((await c.store.getUser({ userId: created.id })).role).toBe('viewer');
      expect((await c.store.listUsers()).map((u) => u.id)).toContain(created.id);
      // Byte order of names, in both stores, whatever the database's collation.
      const names = (await c.store.listUsers()).map((u) => u.name);
      expect(names).toEqual([...names].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
      await refusedWith(c.store.getUser({ userId: parseUserId('9000000000000000000') }), 'NOT_FOUND');
    });

    it('finds a live session by its hash, and not once deleted, expired or revoked', async () => {
      const u = await user();
      const hash = `session-${unique('s')}`;
      const { expiresAt } = await c.store.createSession({ secretHash: hash, userId: u.id, ttlMs: 500 });
      expect(expiresAt.getTime()).toBeGreaterThan((await c.store.now()).getTime());
      expect(await c.store.sessionPrincipal({ secretHash: hash })).toMatchObject({ user: { id: u.id }, role: 'operator', tokenId: null });
      expect(await c.store.sessionPrincipal({ secretHash: `${hash}-other` })).toBeNull();
      await c.store.deleteSession({ secretHash: hash });
      expect(await c.store.sessionPrincipal({ secretHash: hash })).toBeNull();
      // Deleting it again is not an error.
      await c.store.deleteSession({ secretHash: hash });

      const short = `session-${unique('s')}`;
      await c.store.createSession({ secretHash: short, userId: u.id, ttlMs: 200 });
      await c.h.advanceMs(300);
      expect(await c.store.sessionPrincipal({ secretHash: short })).toBeNull();

      const v = await user();
      const a = `session-${unique('s')}`;
      const b = `session-${unique('s')}`;
      await c.store.createSession({ secretHash: a, userId: v.id, ttlMs: HOUR_MS });
      await c.store.createSession({ secretHash: b, userId: v.id, ttlMs: HOUR_MS });
      await c.store.createSession({ secretHash: `session-${unique('s')}`, userId: u.id, ttlMs: HOUR_MS });
      expect(await c.store.revokeSessions({ userId: v.id })).toEqual({ revoked: 2 });
      expect(await c.store.sessionPrincipal({ secretHash: a })).toBeNull();
      expect(await c.store.sessionPrincipal({ secretHash: b })).toBeNull();
    });

    it('ends a user’s sessions when their role, their password or their being enabled changes', async () => {
      const u = await user('admin');
      for (const change of [
        () => c.store.updateUser({ userId: u.id, role: 'viewer' }),
        () => c.store.setPassword({ userId: u.id, passwordHash: 'new-hash' }),
        () => c.store.updateUser({ userId: u.id, disabled: true }),
      ]) {
        const hash = `session-${unique('s')}`;
        await c.store.createSession({ secretHash: hash, userId: u.id, ttlMs: HOUR_MS });
        await change();
        expect(await c.store.sessionPrincipal({ secretHash: hash })).toBeNull();
      }
      expect(await c.store.getUser({ userId: u.id })).toMatchObject({ role: 'viewer', disabled: true });
      expect((await c.store.userCredentials({ name: u.name }))?.passwordHash).toBe('new-hash');
      // A disabled user's new session is not live either.
      const hash = `session-${unique('s')}`;
      await c.store.createSession({ secretHash: hash, userId: u.id, ttlMs: HOUR_MS });
      expect(await c.store.sessionPrincipal({ secretHash: hash })).toBeNull();
      await c.store.updateUser({ userId: u.id, disabled: false });
      expect(await c.store.sessionPrincipal({ secretHash: hash })).toBeNull();
      await refusedWith(c.store.updateUser({ userId: parseUserId('9000000000000000000'), role: 'viewer' }), 'NOT_FOUND');
    });

    it('scopes an API token to a role no higher than its owner’s, and stops it once revoked, expired or its owner demoted', async () => {
      const owner = await user('operator');
      await refusedWith(c.store.createApiToken({ userId: owner.id, name: 'ci', role: 'admin', secretHash: `t-${unique('t')}`, ttlMs: HOUR_MS }), 'FORBIDDEN');
      const hash = `t-${unique('t')}`;
      const token = await c.store.createApiToken({ userId: owner.id, name: 'ci', role: 'operator', secretHash: hash, ttlMs: HOUR_MS });
      expect(token).toMatchObject({ userId: owner.id, userName: owner.name, name: 'ci', role: 'operator', revokedAt: null });
      expect(token).not.toHaveProperty('secretHash');
      expect(await c.store.apiTokenPrincipal({ secretHash: hash })).toMatchObject({ user: { id: owner.id }, role: 'operator', tokenId: token.id });
      expect((await c.store.listApiTokens({ userId: owner.id })).map((t) => t.id)).toEqual([token.id]);
      expect((await c.store.listApiTokens({})).map((t) => t.id)).toContain(token.id);

      // A demoted owner's token does no more than the owner may now.
      await c.store.updateUser({ userId: owner.id, role: 'viewer' });
      expect((await c.store.apiTokenPrincipal({ secretHash: hash }))?.role).toBe('viewer');
      await c.store.updateUser({ userId: owner.id, disabled: true });
      expect(await c.store.apiTokenPrincipal({ secretHash: hash })).toBeNull();
      await c.store.updateUser({ userId: owner.id, disabled: false, role: 'operator' });

      const revoked = await c.store.revokeApiToken({ tokenId: token.id });
      expect(revoked.revokedAt).toBeInstanceOf(Date);
      expect(await c.store.apiTokenPrincipal({ secretHash: hash })).toBeNull();
      // Revoking again keeps the first revocation's time.
      expect((await c.store.revokeApiToken({ tokenId: token.id })).revokedAt?.getTime()).toBe(revoked.revokedAt!.getTime());
      await refusedWith(c.store.revokeApiToken({ tokenId: parseApiTokenId('9000000000000000000') }), 'NOT_FOUND');

      const shortHash = `t-${unique('t')}`;
      await c.store.createApiToken({ userId: owner.id, name: 'short', role: 'viewer', secretHash: shortHash, ttlMs: 200 });
      expect(await c.store.apiTokenPrincipal({ secretHash: shortHash })).not.toBeNull();
      await c.h.advanceMs(300);
      expect(await c.store.apiTokenPrincipal({ secretHash: shortHash })).toBeNull();
    });
  });
}
