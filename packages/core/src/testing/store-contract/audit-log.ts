import { describe, expect, it } from 'vitest';
import { MAX_AUDIT_DETAILS_BYTES } from '../../store';
import type { ContractContext } from './context';
import { refusedWith, unique } from './fixtures';

/** The store contract's part on the audit log: append at store time, read newest first by filter. */
export function auditLogContract(c: ContractContext): void {
  describe('audit log', () => {
    it('appends entries at store time and lists them newest first, filtered by actor, action and DAG', async () => {
      const actor = unique('auditor');
      const dagId = unique('audited-dag');
      const before = await c.store.now();
      const first = await c.store.appendAudit({ actorKind: 'user', actor, action: 'dag.saved', dagId, details: { version: 1 }, source: '127.0.0.1', userAgent: 'test' });
      const second = await c.store.appendAudit({ actorKind: 'user', actor, action: 'dag.triggered', dagId, source: '127.0.0.1' });
      const other = await c.store.appendAudit({ actorKind: 'cli', actor: unique('os-user'), action: 'user.created', target: actor, source: 'cli' });
      expect(first.at.getTime()).toBeGreaterThanOrEqual(before.getTime());
      expect(first).toMatchObject({ actorKind: 'user', actor, action: 'dag.saved', dagId, target: null, details: { version: 1 }, source: '127.0.0.1', userAgent: 'test' });
      expect(second.details).toEqual({});
      expect((await c.store.listAudit({ actor })).map((e) => e.id)).toEqual([second.id, first.id]);
      expect((await c.store.listAudit({ dagId, action: 'dag.saved' })).map((e) => e.id)).toEqual([first.id]);
      expect((await c.store.listAudit({ actor, beforeId: second.id })).map((e) => e.id)).toEqual([first.id]);
      expect((await c.store.listAudit({ actor, limit: 1 })).map((e) => e.id)).toEqual([second.id]);
      expect((await c.store.listAudit({ limit: 500 })).map((e) => e.id)).toContain(other.id);
      // A page key no entry can have names nothing rather than failing.
      expect(await c.store.listAudit({ beforeId: 'not-an-id' })).toEqual([]);
    });

    it('refuses an entry that is malformed or too large, naming the field, and writes nothing', async () => {
      const actor = unique('refused');
      const refused = [
        await refusedWith(c.store.appendAudit({ actorKind: 'user', actor: '', action: 'dag.saved', source: 'x' }), 'INVALID_INPUT'),
        await refusedWith(c.store.appendAudit({ actorKind: 'user', actor, action: 'dag.exploded' as never, source: 'x' }), 'INVALID_INPUT'),
        await refusedWith(
          c.store.appendAudit({ actorKind: 'user', actor, action: 'dag.saved', source: 'x', details: { big: 'x'.repeat(MAX_AUDIT_DETAILS_BYTES) } }),
          'INVALID_INPUT',
        ),
        await refusedWith(c.store.appendAudit({ actorKind: 'robot' as never, actor, action: 'dag.saved', source: 'x' }), 'INVALID_INPUT'),
      ];
      expect(refused.map((e) => e.details.field)).toEqual(['actor', 'action', 'details', 'actorKind']);
      expect(await c.store.listAudit({ actor })).toEqual([]);
    });
  });
}
