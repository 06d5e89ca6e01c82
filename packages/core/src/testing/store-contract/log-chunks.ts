import { describe, expect, it } from 'vitest';
import { parseJobId, parseWorkerId } from '../../ids';
import { LIMITS } from '../../limits';
import type { ContractContext } from './context';
import { LONG_TTL_MS, PAST_TTL_MS, refusedWith, SHORT_TTL_MS } from './fixtures';
import { completeJob } from './one-leader';

/** The store contract's part on streamed logs: renewals append a running attempt's lines, fenced. */
export function logChunksContract(c: ContractContext): void {
  describe('streamed logs', () => {
    const ref = (jobId: string, fence: number, worker: string, log?: string) => ({ jobId: parseJobId(jobId), fence, workerId: parseWorkerId(worker), session: null, log });
    const texts = async (jobId: string, fence: number, afterSeq?: number) => (await c.store.listLogChunks({ jobId: parseJobId(jobId), fence, afterSeq })).map((x) => x.text);

    it('appends the lines an accepted renewal carries, in order, per attempt', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 3 });
      const lease = await c.grantOne(token, ready.id, 'w1');
      expect(await texts(ready.id, lease.fence)).toEqual([]);
      // A renewal without lines appends nothing.
      expect((await c.store.renewLeases([ref(ready.id, lease.fence, 'w1')], LONG_TTL_MS)).map((o) => o.ok)).toEqual([true]);
      expect((await c.store.renewLeases([ref(ready.id, lease.fence, 'w1', 'one\n')], LONG_TTL_MS)).map((o) => o.ok)).toEqual([true]);
      await c.store.renewLeases([ref(ready.id, lease.fence, 'w1', 'two\nthree\n'), ref(ready.id, lease.fence, 'w1', 'twice in one batch\n')], LONG_TTL_MS);
      const chunks = await c.store.listLogChunks({ jobId: ready.id, fence: lease.fence });
      expect(chunks.map((x) => [x.seq, x.text])).toEqual([
        [1, 'one\n'],
        [2, 'two\nthree\n'],
      ]);
      expect(chunks.every((x) => x.jobId === ready.id && x.fence === lease.fence && x.writtenAt instanceof Date)).toBe(true);
      expect(await texts(ready.id, lease.fence, 1)).toEqual(['two\nthree\n']);
      // The next attempt streams under its own fence.
      await c.store.failJob(ref(ready.id, lease.fence, 'w1'), { error: 'boom', retryable: true });
      const next = await c.grantOne(token, ready.id, 'w2');
      await c.store.renewLeases([ref(ready.id, next.fence, 'w2', 'retry\n')], LONG_TTL_MS);
      expect(await texts(ready.id, next.fence)).toEqual(['retry\n']);
      expect(await texts(ready.id, lease.fence)).toEqual(['one\n', 'two\nthree\n']);
    });

    it('appends nothing for a refused renewal: a stale, forged or other holder’s fence, or an expired lease', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 5 });
      const old = await c.grantOne(token, ready.id, 'w1', SHORT_TTL_MS);
      await c.h.advanceMs(PAST_TTL_MS);
      // Expired but not swept yet: the renewal is refused and its lines with it.
      const [late] = await c.store.renewLeases([ref(ready.id, old.fence, 'w1', 'too late\n')], LONG_TTL_MS);
      expect(late!.ok).toBe(false);
      await c.store.sweepExpired(token, 100);
      const current = await c.grantOne(token, ready.id, 'w2');
      const outcomes = await c.store.renewLeases(
        [ref(ready.id, old.fence, 'w1', 'stale\n'), ref(ready.id, current.fence + 1, 'w2', 'forged\n'), ref(ready.id, current.fence, 'w9', 'not the holder\n')],
        LONG_TTL_MS,
      );
      expect(outcomes.map((o) => (o.ok ? 'OK' : o.code))).toEqual(['STALE_FENCE', 'FORGED_FENCE', 'LEASE_LOST']);
      for (const fence of [old.fence, current.fence, current.fence + 1]) expect(await texts(ready.id, fence)).toEqual([]);
      await completeJob(c.store, ref(ready.id, current.fence, 'w2'), { output: null });
      // A finished attempt's lease is gone: its lines are refused with the renewal.
      expect((await c.store.renewLeases([ref(ready.id, current.fence, 'w2', 'after the end\n')], LONG_TTL_MS))[0]!.ok).toBe(false);
      expect(await texts(ready.id, current.fence)).toEqual([]);
    });

    it('keeps at most the per-attempt limit, and refuses a bad read naming the field', async () => {
      const { token, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      const big = 'x'.repeat(LIMITS.maxLogChunkChars);
      const fills = Math.ceil(LIMITS.maxStreamedLogChars / big.length);
      for (let i = 0; i < fills + 2; i++) expect((await c.store.renewLeases([ref(ready.id, lease.fence, 'w1', big)], LONG_TTL_MS))[0]!.ok).toBe(true);
      const chunks = await c.store.listLogChunks({ jobId: ready.id, fence: lease.fence, limit: 1_000 });
      expect(chunks).toHaveLength(fills);
      // Text no store can keep, or more than a renewal may carry, still renews, and is kept changed.
      const other = await c.startedRun();
      const held = await c.grantOne(other.token, other.ready.id, 'w1');
      const [renewed] = await c.store.renewLeases([ref(other.ready.id, held.fence, 'w1', `nul\u0000 lone\ud800 ${'y'.repeat(LIMITS.maxLogChunkChars)}`)], LONG_TTL_MS);
      expect(renewed!.ok).toBe(true);
      const [kept] = await texts(other.ready.id, held.fence);
      expect(kept!.startsWith('nul\ufffd lone\ufffd yyy')).toBe(true);
      expect(kept!.length).toBe(LIMITS.maxLogChunkChars);
      for (const [query, field] of [
        [{ jobId: ready.id, fence: -1 }, 'fence'],
        [{ jobId: ready.id, fence: 1.5 }, 'fence'],
        [{ jobId: ready.id, fence: 1, afterSeq: -1 }, 'afterSeq'],
        [{ jobId: ready.id, fence: 1, limit: 0 }, 'limit'],
        [{ jobId: ready.id, fence: 1, limit: 1_001 }, 'limit'],
      ] as const) {
        const error = await refusedWith(c.store.listLogChunks(query), 'INVALID_INPUT');
        expect(error.details.field).toBe(field);
      }
      expect(await c.store.listLogChunks({ jobId: parseJobId('9223372036854775807'), fence: 1 })).toEqual([]);
    });
  });
}
