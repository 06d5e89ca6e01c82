import { describe, expect, it } from 'vitest';
import { parseJobId, parseWorkerId } from '../../ids';
import { LIMITS } from '../../limits';
import type { EffectRecord } from '../../input/effect-reports';
import type { ContractContext } from './context';
import { LONG_TTL_MS, PAST_TTL_MS, refusedWith, SHORT_TTL_MS } from './fixtures';
import { completeJob } from './one-leader';

/**
 * The store contract's part on effect reports: the outcomes of an attempt's effects are kept
 * with that attempt (and with the result while it is the accepted one), written by the
 * same write as the result, refused with it, and checked before anything is written.
 */
export function effectReportsContract(c: ContractContext): void {
  describe('effect reports', () => {
    const ref = (jobId: string, fence: number, worker: string) => ({ jobId: parseJobId(jobId), fence, workerId: parseWorkerId(worker), session: null });
    const applied = (key: string, fence: number): EffectRecord => ({ key, sink: 'postgres', outcome: 'applied', fence });

    it('keeps each attempt’s effect reports with it, failure and success alike, and with the accepted result', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 3 });
      const first = await c.grantOne(token, ready.id, 'w1');
      const firstEffects: EffectRecord[] = [
        applied('d/r/t', first.fence),
        { key: 'ledger/42', sink: 'http', outcome: 'stale', fence: first.fence, recordedFence: first.fence + 5 },
      ];
      await c.store.failJob(ref(ready.id, first.fence, 'w1'), { error: 'boom', retryable: true, logs: null, effects: firstEffects });
      expect(await c.store.getResult(ready.id)).toMatchObject({ fence: first.fence, effects: firstEffects });
      const second = await c.grantOne(token, ready.id, 'w2');
      const secondEffects: EffectRecord[] = [{ key: 'd/r/t', sink: 'postgres', outcome: 'already-applied', fence: second.fence, recordedFence: first.fence }];
      await completeJob(c.store, ref(ready.id, second.fence, 'w2'), { output: 1, effects: secondEffects });

      const attempts = await c.store.listAttempts(ready.id);
      expect(attempts.map((a) => [a.fence, a.effects])).toEqual([
        [first.fence, firstEffects],
        [second.fence, secondEffects],
      ]);
      expect(await c.store.getResult(ready.id)).toMatchObject({ fence: second.fence, effects: secondEffects });
      expect(await c.store.listRunResults(ready.runId)).toEqual([expect.objectContaining({ jobId: ready.id, effects: secondEffects })]);
    });

    it('keeps null for an attempt that reported none, and only the known fields of each report', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 3 });
      const first = await c.grantOne(token, ready.id, 'w1');
      await c.store.failJob(ref(ready.id, first.fence, 'w1'), { error: 'boom', retryable: true, effects: [] });
      const second = await c.grantOne(token, ready.id, 'w1');
      await completeJob(c.store, ref(ready.id, second.fence, 'w1'), { output: null });
      expect((await c.store.listAttempts(ready.id)).map((a) => a.effects)).toEqual([null, null]);
      expect((await c.store.getResult(ready.id))!.effects).toBeNull();
    });

    it('writes no report with a refused write, and refuses a bad report alone, naming its field, writing nothing', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 5 });
      const expired = await c.grantOne(token, ready.id, 'w1', SHORT_TTL_MS);
      await c.h.advanceMs(PAST_TTL_MS);
      await c.store.sweepExpired(token, 100);
      await refusedWith(completeJob(c.store, ref(ready.id, expired.fence, 'w1'), { output: 'late', effects: [applied('k', expired.fence)] }), 'STALE_FENCE');
      await refusedWith(c.store.failJob(ref(ready.id, expired.fence, 'w1'), { error: 'late', retryable: true, effects: [applied('k', expired.fence)] }), 'STALE_FENCE');
      expect(await c.store.listAttempts(ready.id)).toEqual([]);

      const current = await c.grantOne(token, ready.id, 'w2', LONG_TTL_MS);
      const bad: [unknown, string][] = [
        [Array.from({ length: LIMITS.maxEffectsPerAttempt + 1 }, (_, i) => applied(`k${i}`, current.fence)), 'effects'],
        [[{ ...applied('k', current.fence), outcome: 'maybe' }], 'effects.0.outcome'],
        [[applied('x'.repeat(LIMITS.maxEffectKeyChars + 1), current.fence)], 'effects.0.key'],
        [[applied('nul\u0000key', current.fence)], 'effects.0.key'],
        [[{ ...applied('k', current.fence), sink: 'has space' }], 'effects.0.sink'],
        [[{ ...applied('k', current.fence), fence: -1 }], 'effects.0.fence'],
        [[{ ...applied('k', current.fence), recordedFence: 1.5 }], 'effects.0.recordedFence'],
        [[{ ...applied('k', current.fence), extra: 'rides along' }], 'effects.0.extra'],
        ['not a list', 'effects'],
      ];
      for (const [effects, field] of bad) {
        const [outcome] = await c.store.completeJobs([{ ref: ref(ready.id, current.fence, 'w2'), output: 1, effects: effects as EffectRecord[] }]);
        expect(outcome).toMatchObject({ ok: false, error: { code: 'INVALID_INPUT', details: { field } } });
        const failed = await refusedWith(c.store.failJob(ref(ready.id, current.fence, 'w2'), { error: 'x', retryable: true, effects: effects as EffectRecord[] }), 'INVALID_INPUT');
        expect(failed.details.field).toBe(field);
      }
      // Refused alone: a good item in the same batch is written.
      const other = await c.startedRun();
      const otherLease = await c.grantOne(other.token, other.ready.id, 'w2', LONG_TTL_MS);
      const outcomes = await c.store.completeJobs([
        { ref: ref(ready.id, current.fence, 'w2'), output: 1, effects: [{ ...applied('k', current.fence), outcome: 'maybe' as never }] },
        { ref: ref(other.ready.id, otherLease.fence, 'w2'), output: 2, effects: [applied('good', otherLease.fence)] },
      ]);
      expect(outcomes.map((o) => o.ok)).toEqual([false, true]);
      expect(await c.store.listAttempts(ready.id)).toEqual([]);
      expect((await c.store.getJob(ready.id))!.state).toBe('leased');
      expect((await c.store.listAttempts(other.ready.id)).map((a) => a.effects)).toEqual([[applied('good', otherLease.fence)]]);
    });
  });
}
