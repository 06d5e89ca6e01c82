import { describe, expect, it } from 'vitest';
import { parseWorkerId, MAX_SEQUENCE_ID, parseJobId, type JobId, type RunId } from '../../ids';
import { LIMITS } from '../../limits';
import type { ContractContext } from './context';
import { LONG_TTL_MS, MEDIUM_TTL_MS, PAST_MEDIUM_TTL_MS, refusedWith } from './fixtures';
import { completeJob, grantLeases } from './one-leader';

/** The store contract's part on the worker protocol's fenced writes: renewals, results, failures, and their typed refusals. */
export function workerWritesContract(c: ContractContext): void {
  describe('fenced worker writes', () => {
    it('renews a live lease, and refuses an old fence as STALE_FENCE and a higher one as FORGED_FENCE', async () => {
      const { token, ready } = await c.startedRun();
      const old = await c.grantOne(token, ready.id, 'w1');
      await c.store.releaseJob({ jobId: ready.id, fence: old.fence, workerId: parseWorkerId('w1'), session: null });
      const current = await c.grantOne(token, ready.id, 'w2', MEDIUM_TTL_MS);
      const outcomes = await c.store.renewLeases(
        [
          { jobId: ready.id, fence: old.fence, workerId: parseWorkerId('w1'), session: null },
          { jobId: ready.id, fence: current.fence + 1, workerId: parseWorkerId('w2'), session: null },
          { jobId: ready.id, fence: current.fence, workerId: parseWorkerId('w1'), session: null },
          { jobId: parseJobId('999999999999'), fence: 1, workerId: parseWorkerId('w2'), session: null },
          { jobId: ready.id, fence: current.fence, workerId: parseWorkerId('w2'), session: null },
        ],
        LONG_TTL_MS,
      );
      expect(outcomes.map((o) => (o.ok ? 'OK' : o.code))).toEqual(['STALE_FENCE', 'FORGED_FENCE', 'LEASE_LOST', 'NOT_FOUND', 'OK']);
      expect(outcomes.map((o) => o.jobId)).toEqual([ready.id, ready.id, ready.id, '999999999999', ready.id]);
      const renewed = outcomes[4]!;
      expect(renewed.ok && renewed.leaseExpiresAt.getTime()).toBeGreaterThan(current.leaseExpiresAt.getTime());
      // The renewal outlives the TTL the lease was granted with.
      await c.h.advanceMs(PAST_MEDIUM_TTL_MS);
      expect(await c.store.sweepExpired(token, 100)).toEqual([]);
      expect((await c.store.getJob(ready.id)).holder).toBe('w2');
    });

    it('refuses a result write with a stale or forged fence and leaves the result store unchanged', async () => {
      const { token, ready } = await c.startedRun();
      const old = await c.grantOne(token, ready.id, 'w1');
      await c.store.releaseJob({ jobId: ready.id, fence: old.fence, workerId: parseWorkerId('w1'), session: null });
      const current = await c.grantOne(token, ready.id, 'w2');

      const stale = await refusedWith(
        completeJob(c.store, { jobId: ready.id, fence: old.fence, workerId: parseWorkerId('w1'), session: null }, { output: { by: 'w1' } }),
        'STALE_FENCE',
      );
      expect(stale.details).toMatchObject({ jobId: ready.id, fence: old.fence, recordFence: current.fence });
      const forged = await refusedWith(
        completeJob(c.store, { jobId: ready.id, fence: current.fence + 1, workerId: parseWorkerId('w2'), session: null }, { output: { by: 'forger' } }),
        'FORGED_FENCE',
      );
      expect(forged.details).toMatchObject({ jobId: ready.id, fence: current.fence + 1, recordFence: current.fence });
      await refusedWith(c.store.failJob({ jobId: ready.id, fence: old.fence, workerId: parseWorkerId('w1'), session: null }, { error: 'late', retryable: true }), 'STALE_FENCE');
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect(await c.store.getJob(ready.id)).toMatchObject({ state: 'leased', holder: 'w2', fence: current.fence });

      const done = await completeJob(c.store, { jobId: ready.id, fence: current.fence, workerId: parseWorkerId('w2'), session: null }, { output: { by: 'w2' }, logs: 'ok' });
      expect(done).toMatchObject({ state: 'succeeded', fence: current.fence });
      expect(done.endedAt).toBeInstanceOf(Date);
      const result = await c.store.getResult(ready.id);
      expect(result).toMatchObject({ jobId: ready.id, fence: current.fence, workerId: 'w2', outcome: 'succeeded', output: { by: 'w2' }, logs: 'ok' });

      await refusedWith(completeJob(c.store, { jobId: ready.id, fence: old.fence, workerId: parseWorkerId('w1'), session: null }, { output: { by: 'w1' } }), 'STALE_FENCE');
      await refusedWith(completeJob(c.store, { jobId: ready.id, fence: current.fence, workerId: parseWorkerId('w2'), session: null }, { output: { again: true } }), 'LEASE_LOST');
      expect(await c.store.getResult(ready.id)).toEqual(result);
    });

    it('refuses a result over the size limit and writes nothing', async () => {
      const { token, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      const ref = { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null };
      await refusedWith(completeJob(c.store, ref, { output: 'x'.repeat(300 * 1024) }), 'TOO_LARGE');
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect((await c.store.getJob(ready.id)).state).toBe('leased');
    });

    it('words every refusal by one rule: its class, its cause and its message are the same in both stores', async () => {
      const { token, ready } = await c.startedRun();
      const w = (id: string) => ({ jobId: ready.id, workerId: parseWorkerId(id), session: null });
      const old = await c.grantOne(token, ready.id, 'w1');
      await c.store.releaseJob({ ...w('w1'), fence: old.fence });
      const current = await c.grantOne(token, ready.id, 'w2', MEDIUM_TTL_MS);
      const id = ready.id;

      const missing = await refusedWith(completeJob(c.store, { ...w('w1'), jobId: parseJobId('999999999996'), fence: 1 }, {}), 'NOT_FOUND');
      expect(missing.message).toBe('completeJob refused: job 999999999996 does not exist');
      const stale = await refusedWith(c.store.failJob({ ...w('w1'), fence: old.fence }, { error: 'late', retryable: true }), 'STALE_FENCE');
      expect(stale.message).toBe(`failJob refused: fence ${old.fence} of job ${id} is stale (the record is at ${current.fence})`);
      const [forged] = await c.store.renewLeases([{ ...w('w2'), fence: current.fence + 1 }], LONG_TTL_MS);
      expect(forged).toMatchObject({
        ok: false,
        code: 'FORGED_FENCE',
        message: `renewLease refused: fence ${current.fence + 1} of job ${id} was never issued (the record is at ${current.fence})`,
      });
      const foreign = await refusedWith(completeJob(c.store, { ...w('w1'), fence: current.fence }, {}), 'LEASE_LOST');
      expect(foreign.message).toBe(`completeJob refused: worker w1 no longer holds job ${id}: it is held by w2`);
      expect(foreign.details.cause).toBe('foreign-holder');

      await c.h.advanceMs(PAST_MEDIUM_TTL_MS);
      const expired = await refusedWith(completeJob(c.store, { ...w('w2'), fence: current.fence }, {}), 'LEASE_LOST');
      expect(expired.message).toBe(`completeJob refused: worker w2 no longer holds job ${id}: the lease expired`);
      expect(expired.details).toMatchObject({ cause: 'expired', recordFence: current.fence, holder: 'w2', state: 'leased' });

      const next = await c.startedRun();
      const lease = await c.grantOne(next.token, next.ready.id, 'w3');
      const ref = { jobId: next.ready.id, fence: lease.fence, workerId: parseWorkerId('w3'), session: null };
      await completeJob(c.store, ref, { output: 1 });
      const ended = await refusedWith(c.store.failJob(ref, { error: 'late', retryable: false }), 'LEASE_LOST');
      expect(ended.message).toBe(`failJob refused: worker w3 no longer holds job ${next.ready.id}: the job is succeeded`);
      expect(ended.details.cause).toBe('ended');
    });

    it('refuses a failure whose error and logs pass the result limit as TOO_LARGE, and writes nothing', async () => {
      const { token, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      const ref = { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null };
      const error = 'e'.repeat(60 * 1024);
      const logs = 'l'.repeat(200 * 1024);
      const tooBig = await refusedWith(c.store.failJob(ref, { error, retryable: true, logs }), 'TOO_LARGE');
      expect(tooBig.message).toBe(
        `the failure of job ${ready.id} (error and logs) is ${260 * 1024} bytes; a result may be at most ${LIMITS.maxResultBytes} bytes (LIMITS.maxResultBytes). Log less.`,
      );
      expect(tooBig.details).toMatchObject({ jobId: ready.id, bytes: 260 * 1024, limitBytes: LIMITS.maxResultBytes });
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect(await c.store.getJob(ready.id)).toMatchObject({ state: 'leased', fence: lease.fence });
    });

    it('completes a batch: each item fenced on its own, refusals typed, nothing written for them', async () => {
      const first = await c.startedRun();
      const second = await c.startedRun();
      const third = await c.startedRun();
      const l1 = await c.grantOne(first.token, first.ready.id, 'w1');
      const l2 = await c.grantOne(second.token, second.ready.id, 'w2');
      const l3 = await c.grantOne(third.token, third.ready.id, 'w3');
      const outcomes = await c.store.completeJobs([
        { ref: { jobId: first.ready.id, fence: l1.fence, workerId: parseWorkerId('w1'), session: null }, output: { n: 1 }, logs: 'one' },
        { ref: { jobId: second.ready.id, fence: l2.fence - 1, workerId: parseWorkerId('w2'), session: null }, output: { n: 2 } },
        { ref: { jobId: third.ready.id, fence: l3.fence, workerId: parseWorkerId('w3'), session: null }, output: 'x'.repeat(300 * 1024) },
        { ref: { jobId: parseJobId('999999999997'), fence: 1, workerId: parseWorkerId('w4'), session: null } },
        { ref: { jobId: first.ready.id, fence: l1.fence, workerId: parseWorkerId('w1'), session: null }, output: { n: 'again' } },
        { ref: { jobId: third.ready.id, fence: l3.fence + 1, workerId: parseWorkerId('w3'), session: null }, output: { n: 3 } },
      ]);
      expect(outcomes.map((o) => o.jobId)).toEqual([first.ready.id, second.ready.id, third.ready.id, '999999999997', first.ready.id, third.ready.id]);
      expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['ok', 'STALE_FENCE', 'TOO_LARGE', 'NOT_FOUND', 'LEASE_LOST', 'FORGED_FENCE']);
      expect(outcomes[0]!.ok && outcomes[0]!.row).toMatchObject({ id: first.ready.id, state: 'succeeded', fence: l1.fence });
      expect(await c.store.getResult(first.ready.id)).toMatchObject({ fence: l1.fence, workerId: 'w1', output: { n: 1 }, logs: 'one' });
      expect(await c.store.getResult(second.ready.id)).toBeNull();
      expect(await c.store.getResult(third.ready.id)).toBeNull();
      expect((await c.store.getJob(second.ready.id)).state).toBe('leased');
      expect((await c.store.getJob(third.ready.id)).state).toBe('leased');
      expect(await c.store.completeJobs([])).toEqual([]);
    });

    it('refuses writes to a job that does not exist as NOT_FOUND', async () => {
      await refusedWith(completeJob(c.store, { jobId: parseJobId('999999999998'), fence: 1, workerId: parseWorkerId('w'), session: null }, {}), 'NOT_FOUND');
      await refusedWith(c.store.releaseJob({ jobId: parseJobId('999999999998'), fence: 1, workerId: parseWorkerId('w'), session: null }), 'NOT_FOUND');
      await refusedWith(c.store.getJob(parseJobId('999999999998')), 'NOT_FOUND');
    });

    it('takes a job id in its one decimal form only: the largest bigint names no job, a leading zero is not the job', async () => {
      const { token, ready, run } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      await refusedWith(c.store.getJob(parseJobId(MAX_SEQUENCE_ID)), 'NOT_FOUND');
      expect(await c.store.getResult(parseJobId(MAX_SEQUENCE_ID))).toBeNull();
      // The parsers refuse these; a store still must not read '0' + id as the job (PostgreSQL would cast it to the same bigint).
      const padded = `0${ready.id}` as JobId;
      await refusedWith(c.store.getJob(padded), 'NOT_FOUND');
      expect(await c.store.listJobs(`0${run.id}` as RunId)).toEqual([]);
      await refusedWith(completeJob(c.store, { jobId: padded, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, {}), 'NOT_FOUND');
      const [renewal] = await c.store.renewLeases([{ jobId: padded, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }], LONG_TTL_MS);
      expect(renewal).toMatchObject({ ok: false, code: 'NOT_FOUND' });
      expect((await c.store.getJob(ready.id)).state).toBe('leased');
    });

    it('failJob retries after the backoff: a grant before it is refused, one after it succeeds', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 2, retryBackoffMs: MEDIUM_TTL_MS });
      const lease = await c.grantOne(token, ready.id, 'w1');
      const before = await c.store.now();
      const failed = await c.store.failJob(
        { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null },
        { error: 'boom', retryable: true, logs: 'trace' },
      );
      expect(failed).toMatchObject({ state: 'ready', fence: lease.fence, lastError: 'boom', attempt: 1 });
      expect(failed.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before.getTime() + MEDIUM_TTL_MS);
      expect(await c.store.getResult(ready.id)).toMatchObject({ outcome: 'failed', error: 'boom', logs: 'trace', fence: lease.fence });
      expect(await grantLeases(c.store, token, [{ jobId: ready.id, workerId: parseWorkerId('w2') }], LONG_TTL_MS)).toEqual([]);

      await c.h.advanceMs(PAST_MEDIUM_TTL_MS);
      const retry = await c.grantOne(token, ready.id, 'w2');
      expect(retry).toMatchObject({ attempt: 2, fence: lease.fence + 1 });
      // The last attempt fails for good even though the failure is retryable.
      const final = await c.store.failJob({ jobId: ready.id, fence: retry.fence, workerId: parseWorkerId('w2'), session: null }, { error: 'boom again', retryable: true });
      expect(final).toMatchObject({ state: 'failed', nextAttemptAt: null });
      expect(await c.store.getResult(ready.id)).toMatchObject({ outcome: 'failed', error: 'boom again', fence: retry.fence, workerId: 'w2' });
    });

    it('a failure that is not retryable fails the job at once', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 5 });
      const lease = await c.grantOne(token, ready.id, 'w1');
      const failed = await c.store.failJob({ jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { error: 'bad input', retryable: false });
      expect(failed.state).toBe('failed');
      expect(failed.endedAt).toBeInstanceOf(Date);
    });
  });
}
