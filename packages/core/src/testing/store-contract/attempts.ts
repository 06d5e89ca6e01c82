import { describe, expect, it } from 'vitest';
import { parseJobId, parseRunId, parseWorkerId, MAX_SEQUENCE_ID } from '../../ids';
import type { ContractContext } from './context';
import { LONG_TTL_MS, PAST_TTL_MS, refusedWith, SHORT_TTL_MS } from './fixtures';
import { completeJob } from './one-leader';

/** The store contract's part on attempts: every attempt that wrote a result keeps it, under its own fence. */
export function attemptsContract(c: ContractContext): void {
  describe('attempts', () => {
    const ref = (jobId: string, fence: number, worker: string) => ({ jobId: parseJobId(jobId), fence, workerId: parseWorkerId(worker), session: null });

    it('keeps every attempt’s outcome, error, output and logs, oldest first, while the result keeps the last', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 3 });
      expect(await c.store.listAttempts(ready.id)).toEqual([]);
      const first = await c.grantOne(token, ready.id, 'w1');
      await c.store.failJob(ref(ready.id, first.fence, 'w1'), { error: 'boom', retryable: true, logs: 'first try\n' });
      const second = await c.grantOne(token, ready.id, 'w2');
      await c.store.failJob(ref(ready.id, second.fence, 'w2'), { error: 'boom again', retryable: true, logs: null });
      const third = await c.grantOne(token, ready.id, 'w3');
      await completeJob(c.store, ref(ready.id, third.fence, 'w3'), { output: { rows: 3 }, logs: 'third try\n' });

      const attempts = await c.store.listAttempts(ready.id);
      expect(attempts).toEqual([
        expect.objectContaining({ jobId: ready.id, fence: first.fence, attempt: 1, workerId: 'w1', outcome: 'failed', error: 'boom', output: null, logs: 'first try\n' }),
        expect.objectContaining({ jobId: ready.id, fence: second.fence, attempt: 2, workerId: 'w2', outcome: 'failed', error: 'boom again', logs: null }),
        expect.objectContaining({ jobId: ready.id, fence: third.fence, attempt: 3, workerId: 'w3', outcome: 'succeeded', error: null, output: { rows: 3 }, logs: 'third try\n' }),
      ]);
      // Each attempt ran from its own grant to its own result, by the store's clock.
      expect(attempts.map((a) => a.startedAt)).toEqual([first.leasedAt, second.leasedAt, third.leasedAt]);
      for (const a of attempts) expect(a.endedAt.getTime()).toBeGreaterThanOrEqual(a.startedAt!.getTime());
      expect(await c.store.getResult(ready.id)).toMatchObject({ fence: third.fence, outcome: 'succeeded' });
      // The run's results in one read: the same last result, once.
      expect(await c.store.listRunResults(ready.runId)).toEqual([await c.store.getResult(ready.id)]);
      expect(await c.store.listRunResults(parseRunId('987654321'))).toEqual([]);
      expect(await c.store.listRunResults('not-an-id' as never)).toEqual([]);
    });

    it('adds no attempt for a refused write, an expired lease or a lease handed back', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 5 });
      // Handed back: no result, no attempt.
      const handed = await c.grantOne(token, ready.id, 'w1');
      await c.store.releaseJob(ref(ready.id, handed.fence, 'w1'));
      // Expired and swept: the late worker's writes are refused and add nothing.
      const expired = await c.grantOne(token, ready.id, 'w2', SHORT_TTL_MS);
      await c.h.advanceMs(PAST_TTL_MS);
      expect((await c.store.sweepExpired(token, 100)).map((s) => s.jobId)).toEqual([ready.id]);
      await refusedWith(completeJob(c.store, ref(ready.id, expired.fence, 'w2'), { output: 'late' }), 'STALE_FENCE');
      await refusedWith(c.store.failJob(ref(ready.id, expired.fence, 'w2'), { error: 'late', retryable: true }), 'STALE_FENCE');
      const current = await c.grantOne(token, ready.id, 'w3', LONG_TTL_MS);
      // A forged fence and a write by someone else than the holder add nothing either.
      await refusedWith(completeJob(c.store, ref(ready.id, current.fence + 1, 'w3'), { output: 'forged' }), 'FORGED_FENCE');
      await refusedWith(completeJob(c.store, ref(ready.id, current.fence, 'w9'), { output: 'not mine' }), 'LEASE_LOST');
      expect(await c.store.listAttempts(ready.id)).toEqual([]);
      await completeJob(c.store, ref(ready.id, current.fence, 'w3'), { output: 'done' });
      // A second write under the same fence is refused and keeps the one attempt as it was.
      await refusedWith(completeJob(c.store, ref(ready.id, current.fence, 'w3'), { output: 'again' }), 'LEASE_LOST');
      const attempts = await c.store.listAttempts(ready.id);
      expect(attempts.map((a) => [a.fence, a.workerId, a.output])).toEqual([[current.fence, 'w3', 'done']]);
    });

    it('answers no attempts for a job that does not exist or an id no job can have', async () => {
      expect(await c.store.listAttempts(parseJobId(MAX_SEQUENCE_ID))).toEqual([]);
      expect(await c.store.listAttempts('01' as never)).toEqual([]);
    });
  });
}
