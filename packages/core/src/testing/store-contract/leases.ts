import { describe, expect, it } from 'vitest';
import type { FencelineError } from '../../errors';
import { LIMITS } from '../../limits';
import type { ContractContext } from './context';
import { LONG_TTL_MS, MEDIUM_TTL_MS, PAST_TTL_MS, refusedWith, SHORT_TTL_MS } from './fixtures';
import { completeJob, grantLeases } from './one-leader';
import { parseJobId, parseWorkerId, type JobId } from '../../ids';

/** The store contract's part on a leader's side of job leases: grants, the fence they raise, revocation of expired leases, and re-reading leased jobs. */
export function leaseContract(c: ContractContext): void {
  describe('job leases and fencing tokens', () => {
    it('grants exactly one lease when 50 grants for one job race', async () => {
      const { token, ready } = await c.startedRun();
      const attempts = Array.from({ length: 50 }, (_, i) => grantLeases(c.store, token, [{ jobId: ready.id, workerId: parseWorkerId(`w${i}`) }], LONG_TTL_MS));
      const granted = (await Promise.all(attempts)).flat();
      expect(granted).toHaveLength(1);
      const job = await c.store.getJob(ready.id);
      expect(job.state).toBe('leased');
      expect(job.fence).toBe(ready.fence + 1);
      expect(job.attempt).toBe(1);
      expect(job.holder).toBe(granted[0]!.workerId);
      expect(granted[0]!.fence).toBe(job.fence);
      expect((await c.store.listLeasedJobs(granted[0]!.workerId)).map((j) => j.id)).toEqual([ready.id]);
    });

    it('grants a batch in one call and refuses jobs that are not ready', async () => {
      const { token, ready, waiting } = await c.startedRun();
      const granted = await grantLeases(
        c.store,
        token,
        [
          { jobId: ready.id, workerId: parseWorkerId('w1') },
          { jobId: waiting.id, workerId: parseWorkerId('w2') },
          { jobId: ready.id, workerId: parseWorkerId('w3') },
        ],
        LONG_TTL_MS,
      );
      expect(granted.map((g) => [g.jobId, g.workerId])).toEqual([[ready.id, 'w1']]);
      expect(granted[0]).toMatchObject({ taskId: 'a', attempt: 1, fence: ready.fence + 1 });
      expect((await c.store.getJob(waiting.id)).state).toBe('waiting');
    });

    it('grants for several shards in one call, each under its own token', async () => {
      const one = await c.startedRun();
      const two = await c.startedRun();
      const three = await c.startedRun();
      // The third shard's leader is deposed before the call.
      await c.store.releaseShard(three.token);
      const out = await c.store.grantLeasesMany(
        [
          // A grant naming another shard's job does not land through this token.
          {
            token: one.token,
            grants: [
              { jobId: one.ready.id, workerId: parseWorkerId('w1') },
              { jobId: two.ready.id, workerId: parseWorkerId('w1') },
            ],
          },
          {
            token: two.token,
            grants: [
              { jobId: two.ready.id, workerId: parseWorkerId('w2') },
              { jobId: two.waiting.id, workerId: parseWorkerId('w2') },
            ],
          },
          { token: three.token, grants: [{ jobId: three.ready.id, workerId: parseWorkerId('w3') }] },
        ],
        LONG_TTL_MS,
      );
      expect(Array.isArray(out[0]) && out[0].map((g) => [g.jobId, g.workerId, g.fence])).toEqual([[one.ready.id, 'w1', 1]]);
      expect(Array.isArray(out[1]) && out[1].map((g) => [g.jobId, g.workerId])).toEqual([[two.ready.id, 'w2']]);
      expect(out[2]).toBeInstanceOf(Error);
      expect((out[2] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getJob(three.ready.id)).state).toBe('ready');
      expect((await c.store.getJob(two.waiting.id)).state).toBe('waiting');
      expect(await c.store.grantLeasesMany([], LONG_TTL_MS)).toEqual([]);
    });

    it('raises the fence by one on every lease and every revocation', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 3, retryBackoffMs: 0 });
      const f0 = ready.fence;
      const first = await c.grantOne(token, ready.id, 'w1');
      expect(first.fence).toBe(f0 + 1);
      const released = await c.store.releaseJob({ jobId: ready.id, fence: first.fence, workerId: parseWorkerId('w1'), session: null });
      expect(released).toMatchObject({ state: 'ready', fence: f0 + 2, attempt: 0, holder: null });
      const second = await c.grantOne(token, ready.id, 'w2', SHORT_TTL_MS);
      expect(second).toMatchObject({ fence: f0 + 3, attempt: 1 });
      // A renewal leaves the fence alone, and makes the expiry below a counted attempt.
      expect((await c.store.renewLeases([{ jobId: ready.id, fence: second.fence, workerId: parseWorkerId('w2'), session: null }], SHORT_TTL_MS))[0]).toMatchObject({ ok: true });
      await c.h.advanceMs(PAST_TTL_MS);
      const swept = await c.store.sweepExpired(token, 100);
      expect(swept).toEqual([expect.objectContaining({ jobId: ready.id, previousHolder: 'w2', fence: f0 + 4, state: 'ready' })]);
      const third = await c.grantOne(token, ready.id, 'w3');
      expect(third).toMatchObject({ fence: f0 + 5, attempt: 2 });
    });

    it('getJobs reads many jobs at once, in id order, leaving out ids that name no job', async () => {
      const one = await c.startedRun();
      const two = await c.startedRun();
      await c.grantOne(two.token, two.ready.id, 'w1');
      // 'not-an-id' is cast past the parser on purpose: a store leaves out text no id can be.
      const ids = [two.ready.id, parseJobId('999999999998'), one.waiting.id, 'not-an-id' as JobId, one.ready.id, two.ready.id];
      const got = await c.store.getJobs(ids);
      const expected = [one.ready, one.waiting, two.ready].map((j) => j.id).sort((a, b) => Number(BigInt(a) - BigInt(b)));
      expect(got.map((j) => j.id)).toEqual(expected);
      // Each row is the job as getJob reads it.
      for (const job of got) expect(job).toEqual(await c.store.getJob(job.id));
      expect(got.find((j) => j.id === two.ready.id)).toMatchObject({ state: 'leased', holder: 'w1' });
      expect(await c.store.getJobs([])).toEqual([]);
      await refusedWith(c.store.getJobs(Array.from({ length: LIMITS.maxJobsPerRead + 1 }, (_, i) => parseJobId(String(i + 1)))), 'INVALID_INPUT');
    });

    it('sweeps an expired lease back to ready with a higher fence, and then refuses the old holder', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 2, retryBackoffMs: 0 });
      const lease = await c.grantOne(token, ready.id, 'w1', SHORT_TTL_MS);
      const ref = { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null };
      // Renewed once, so the holder had it: its expiry uses the attempt.
      expect((await c.store.renewLeases([ref], SHORT_TTL_MS))[0]).toMatchObject({ ok: true });
      await c.h.advanceMs(PAST_TTL_MS);
      // Expired but not yet swept: the fence still matches, the lease is gone.
      await refusedWith(completeJob(c.store, ref, { output: 1 }), 'LEASE_LOST');
      const [renewal] = await c.store.renewLeases([ref], LONG_TTL_MS);
      expect(renewal).toMatchObject({ ok: false, code: 'LEASE_LOST' });

      const swept = await c.store.sweepExpired(token, 100);
      expect(swept).toHaveLength(1);
      expect(swept[0]).toMatchObject({ jobId: ready.id, previousHolder: 'w1', fence: lease.fence + 1, state: 'ready', renewed: true, attemptCounted: true });
      expect(await c.store.getJob(ready.id)).toMatchObject({ state: 'ready', fence: lease.fence + 1, holder: null, attempt: 1 });

      await refusedWith(completeJob(c.store, ref, { output: 1 }), 'STALE_FENCE');
      await refusedWith(c.store.failJob(ref, { error: 'late', retryable: false }), 'STALE_FENCE');
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect(await c.store.sweepExpired(token, 100)).toEqual([]);
    });

    it('fails the job when the sweep finds it out of attempts', async () => {
      const { token, ready } = await c.startedRun({ maxAttempts: 1 });
      const lease = await c.grantOne(token, ready.id, 'w1', SHORT_TTL_MS);
      await c.store.renewLeases([{ jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }], SHORT_TTL_MS);
      await c.h.advanceMs(PAST_TTL_MS);
      const swept = await c.store.sweepExpired(token, 100);
      expect(swept).toEqual([expect.objectContaining({ jobId: ready.id, state: 'failed', nextAttemptAt: null, attemptCounted: true })]);
      const job = await c.store.getJob(ready.id);
      expect(job.state).toBe('failed');
      expect(job.endedAt).toBeInstanceOf(Date);
      expect(await grantLeases(c.store, token, [{ jobId: ready.id, workerId: parseWorkerId('w2') }], LONG_TTL_MS)).toEqual([]);
    });

    it('hands the attempt back when a lease expires unrenewed, at most LIMITS.maxLostLeases times', async () => {
      // One attempt and a long backoff: a counted expiry would fail the job, and a
      // backoff would show as a refused grant.
      const { token, ready } = await c.startedRun({ maxAttempts: 1, retryBackoffMs: MEDIUM_TTL_MS });
      for (let lost = 1; lost <= LIMITS.maxLostLeases; lost++) {
        const lease = await c.grantOne(token, ready.id, `w${lost}`, SHORT_TTL_MS);
        expect(lease.attempt).toBe(1);
        await c.h.advanceMs(PAST_TTL_MS);
        const swept = await c.store.sweepExpired(token, 100);
        expect(swept).toEqual([expect.objectContaining({ jobId: ready.id, state: 'ready', nextAttemptAt: null, renewed: false, attemptCounted: false, fence: lease.fence + 1 })]);
        const job = await c.store.getJob(ready.id);
        expect(job).toMatchObject({ state: 'ready', attempt: 0, holder: null });
        expect(job.lastError).toContain('not counted');
        // The old holder is fenced off as after any expiry.
        await refusedWith(completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId(`w${lost}`), session: null }, { output: 1 }), 'STALE_FENCE');
      }
      // The next unrenewed expiry counts, and with one attempt the job fails.
      await c.grantOne(token, ready.id, 'w-last', SHORT_TTL_MS);
      await c.h.advanceMs(PAST_TTL_MS);
      expect(await c.store.sweepExpired(token, 100)).toEqual([expect.objectContaining({ jobId: ready.id, state: 'failed', attemptCounted: true })]);
    });
  });
}
