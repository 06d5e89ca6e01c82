import { describe, expect, it } from 'vitest';
import type { StoreNotice } from '../../store';
import type { ContractContext } from './context';
import { eventually, refusedWith, unique } from './fixtures';

/** The store contract's part on worker credentials: issued, found by hash, listed, revoked with a notice. */
export function credentialsContract(c: ContractContext): void {
  describe('worker credentials', () => {
    it('finds a credential by the hash of its secret, stamps it used, and lists it without the hash', async () => {
      const id = unique('wk');
      const hash = unique('hash');
      const created = await c.store.createWorkerCredential({ id, pool: 'gpu', secretHash: hash });
      expect(created).toMatchObject({ id, pool: 'gpu', revokedAt: null, lastUsedAt: null });
      expect(await c.store.findWorkerCredential({ secretHash: unique('unknown') })).toBeNull();
      const found = await c.store.findWorkerCredential({ secretHash: hash });
      expect(found).toMatchObject({ id, pool: 'gpu', revokedAt: null });
      expect(found!.lastUsedAt).toBeInstanceOf(Date);
      const listed = (await c.store.listWorkerCredentials()).find((r) => r.id === id);
      expect(listed).toMatchObject({ id, pool: 'gpu' });
      expect(JSON.stringify(listed)).not.toContain(hash);
    });

    it('revokes a credential, keeps the first revocation time, and tells every subscriber', async () => {
      const id = unique('wk');
      const hash = unique('hash');
      await c.store.createWorkerCredential({ id, pool: 'cpu', secretHash: hash });
      const heard: StoreNotice[] = [];
      const stop = await c.store.subscribe((n) => heard.push(n));
      try {
        const revoked = await c.store.revokeWorkerCredential({ id });
        expect(revoked.revokedAt).toBeInstanceOf(Date);
        expect((await c.store.findWorkerCredential({ secretHash: hash }))?.revokedAt).toEqual(revoked.revokedAt);
        expect((await c.store.revokeWorkerCredential({ id })).revokedAt).toEqual(revoked.revokedAt);
        await eventually(() => heard.some((n) => n.kind === 'credential-revoked' && n.credentialId === id));
      } finally {
        await stop();
      }
      await refusedWith(c.store.revokeWorkerCredential({ id: unique('missing') }), 'NOT_FOUND');
    });
  });
}
