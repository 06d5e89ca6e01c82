import { describe, expect, it } from 'vitest';
import { parseJobId, parseWorkerId } from '../../ids';
import type { ContractContext } from './context';
import { refusedWith } from './fixtures';

/** JSON nested `depth` levels deep, built without recursion. */
function nested(depth: number): unknown {
  let value: unknown = 'bottom';
  for (let i = 0; i < depth; i++) value = [value];
  return value;
}

/**
 * The store contract's part on text and JSON PostgreSQL cannot store (a NUL character, a
 * lone surrogate) and JSON nested past LIMITS.maxJsonDepth: each item carrying them is
 * refused on its own as INVALID_INPUT naming its field, the other items of the same batch
 * are written as if it were not there, and nothing is written for it.
 */
export function badBytesContract(c: ContractContext): void {
  describe('text and JSON a store cannot take', () => {
    it('refuses each such completion on its own and completes the rest of the batch', async () => {
      const runs = await Promise.all([c.startedRun(), c.startedRun(), c.startedRun(), c.startedRun(), c.startedRun()]);
      const leases = await Promise.all(runs.map((r, i) => c.grantOne(r.token, r.ready.id, `bb-${i}`)));
      const ref = (i: number) => ({ jobId: runs[i]!.ready.id, fence: leases[i]!.fence, workerId: parseWorkerId(`bb-${i}`), session: null });
      const outcomes = await c.store.completeJobs([
        { ref: ref(0), output: { text: 'nul\u0000' } },
        { ref: ref(1), output: { fine: true }, logs: 'honest' },
        { ref: ref(2), output: ['lone\ud800'] },
        { ref: ref(3), output: { deep: nested(5_000) } },
        { ref: ref(4), output: null, logs: 'nul\u0000log' },
        { ref: { jobId: parseJobId('999999999996'), fence: 1, workerId: parseWorkerId('bb-x'), session: null }, output: { ['key\u0000']: 1 } },
      ]);
      expect(outcomes.map((o) => (o.ok ? 'ok' : `${o.error.code} ${String(o.error.details.field)}`))).toEqual([
        'INVALID_INPUT output.text',
        'ok',
        'INVALID_INPUT output.0',
        expect.stringMatching(/^INVALID_INPUT output\.deep(\.0)+$/),
        'INVALID_INPUT logs',
        'INVALID_INPUT output.key\u0000',
      ]);
      for (const o of outcomes) if (!o.ok) expect(o.error.message).not.toMatch(/honest|bb-1/);
      expect(await c.store.getResult(runs[1]!.ready.id)).toMatchObject({ workerId: 'bb-1', output: { fine: true }, logs: 'honest' });
      for (const i of [0, 2, 3, 4]) {
        expect(await c.store.getResult(runs[i]!.ready.id)).toBeNull();
        expect((await c.store.getJob(runs[i]!.ready.id)).state).toBe('leased');
      }
    });

    it('refuses such a failure or registration as INVALID_INPUT naming the field, and writes nothing', async () => {
      const { token, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'bb-f');
      const ref = { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('bb-f'), session: null };
      expect((await refusedWith(c.store.failJob(ref, { error: 'nul\u0000', retryable: true }), 'INVALID_INPUT')).details.field).toBe('error');
      expect((await refusedWith(c.store.failJob(ref, { error: 'ok', retryable: true, logs: '\udc00' }), 'INVALID_INPUT')).details.field).toBe('logs');
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect((await c.store.getJob(ready.id)).state).toBe('leased');
      const id = parseWorkerId('bb-register');
      expect(
        (await refusedWith(c.store.registerWorker({ id, slots: 1, nodeId: null, meta: { host: 'a\u0000' }, session: 'bb-session', credentialId: null }), 'INVALID_INPUT')).details
          .field,
      ).toBe('meta.host');
      await refusedWith(c.store.registerWorker({ id, slots: 1, nodeId: null, meta: { deep: nested(5_000) }, session: 'bb-session', credentialId: null }), 'INVALID_INPUT');
      expect((await c.store.listWorkers(60_000)).some((w) => w.id === id)).toBe(false);
    });
  });
}
