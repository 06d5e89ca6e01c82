import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { shardOf } from '../dag/shard';
import type { FencelineError } from '../errors';
import type { JobRow, RunRow } from '../model';
import type { DagSpecInput } from '../spec';
import { LIMITS } from '../limits';
import type { CreatedRun, DuePageKey, LeaderToken, NewJob, Store, StoreNotice } from '../store';

/**
 * The Store contract as behaviours, exercised only through the Store interface so the SQL
 * store and the simulator's in-memory store pass the same suite.
 *
 * `setup` runs before every test and `teardown` after it. `advanceMs` moves store time
 * forward: the SQL store sleeps, a virtual-clock store steps its clock. Tests keep lease
 * TTLs short so the SQL run stays fast, and they never assume a store is empty: each test
 * works on its own DAGs, in its own shards, with its own node and worker names, so a
 * store shared by the tests of one file is fine.
 */
export interface StoreHarness {
  store: Store;
  advanceMs(ms: number): Promise<void>;
  teardown(): Promise<void>;
}

/**
 * The gap between the slot a test creates a run for and the next_run_at it moves to. The
 * store compares and sets next_run_at without checking it is a slot of the schedule, and
 * a run is created only once its slot is due, so tests move by a few milliseconds rather
 * than wait a schedule period.
 */
const DUE_STEP_MS = 10;
/** Many shards, so each test can own a few without meeting another test's leader. */
const SHARD_COUNT = 4096;
/** A lease that expires within a test. */
const SHORT_TTL_MS = 300;
/** How far to advance past a short lease so it has certainly expired. */
const PAST_TTL_MS = 450;
/**
 * A lease that must survive a few statements first (on a loaded CI machine a statement
 * can stall for a while), yet still expire within the test.
 */
const MEDIUM_TTL_MS = 1_000;
const PAST_MEDIUM_TTL_MS = 1_150;
/** A lease (or shard lease) that outlives any test. */
const LONG_TTL_MS = 60_000;

let counter = 0;
const runTag = Math.random().toString(36).slice(2, 8);

/** A name no other test (or earlier run against the same store) uses. */
function unique(prefix: string): string {
  counter += 1;
  return `${prefix}-${runTag}-${counter}`;
}

let nextShard = Math.floor(Math.random() * SHARD_COUNT);

/** A fresh DAG id that lands in a shard no other test of this run uses. */
function dagIdInFreshShard(prefix: string): { dagId: string; shard: number } {
  nextShard = (nextShard + 1) % SHARD_COUNT;
  const base = unique(prefix);
  for (let k = 0; ; k++) {
    const dagId = `${base}-${k}`;
    if (shardOf(dagId, SHARD_COUNT) === nextShard) return { dagId, shard: nextShard };
  }
}

function spec(id: string, extra: Partial<DagSpecInput> = {}): DagSpecInput {
  return {
    id,
    tasks: [
      { id: 'a', type: 'noop' },
      { id: 'b', type: 'noop', dependsOn: ['a'] },
    ],
    ...extra,
  };
}

function newJobs(opts: { maxAttempts?: number; retryBackoffMs?: number; retryBackoffMaxMs?: number } = {}): NewJob[] {
  const common = {
    maxAttempts: opts.maxAttempts ?? 3,
    priority: 0,
    retryBackoffMs: opts.retryBackoffMs ?? 0,
    retryBackoffMaxMs: opts.retryBackoffMaxMs ?? opts.retryBackoffMs ?? 0,
    timeoutMs: 60_000,
  };
  return [
    { taskId: 'a', state: 'ready', ...common },
    { taskId: 'b', state: 'waiting', ...common },
  ];
}

/** Expects `promise` to reject with a typed store error of `code`, and returns it. */
async function refusedWith(promise: Promise<unknown>, code: string): Promise<FencelineError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e as FencelineError,
  );
  expect(error, `expected a ${code} refusal`).toBeDefined();
  expect(error?.code).toBe(code);
  return error as FencelineError;
}

export function storeContract(name: string, setup: () => Promise<StoreHarness>): void {
  describe(`${name}: store contract`, () => {
    let h: StoreHarness;
    let store: Store;

    beforeEach(async () => {
      h = await setup();
      store = h.store;
    });
    afterEach(async () => {
      await h.teardown();
    });

    /** `dagId` and more DAG ids in its shard, `${dagId}${tag}<k>` searched until they land there. */
    function idsInShard(dagId: string, shard: number, count: number, tag: string): string[] {
      const ids = [dagId];
      for (let k = 0; ids.length < count; k++) {
        const candidate = `${dagId}${tag}${k}`;
        if (shardOf(candidate, SHARD_COUNT) === shard) ids.push(candidate);
      }
      return ids;
    }

    /** Waits (advances store time) until every one of these store times has passed. */
    async function untilDue(atMs: number[]): Promise<void> {
      const waitMs = Math.max(...atMs) - (await store.now()).getTime() + 5;
      if (waitMs > 0) await h.advanceMs(waitMs);
    }

    /** Leads a fresh shard with a new node. */
    async function leadFreshShard(ttlMs = LONG_TTL_MS, prefix = 'dag'): Promise<{ token: LeaderToken; dagId: string }> {
      const { dagId, shard } = dagIdInFreshShard(prefix);
      const acquired = await store.acquireShard(shard, unique('node'), ttlMs);
      expect(acquired).not.toBeNull();
      return { token: acquired!.token, dagId };
    }

    /** A manual DAG, its shard led, one run started: job `a` ready, job `b` waiting. */
    async function startedRun(opts: { maxAttempts?: number; retryBackoffMs?: number; shardTtlMs?: number } = {}) {
      const { token, dagId } = await leadFreshShard(opts.shardTtlMs);
      await store.putDag(spec(dagId), SHARD_COUNT);
      const run = await store.triggerRun(dagId);
      const jobs = await store.startRun(token, run.id, newJobs(opts));
      expect(jobs).toHaveLength(2);
      const ready = jobs.find((j) => j.taskId === 'a') as JobRow;
      const waiting = jobs.find((j) => j.taskId === 'b') as JobRow;
      return { token, dagId, run, ready, waiting };
    }

    async function grantOne(token: LeaderToken, jobId: string, workerId: string, ttlMs = LONG_TTL_MS) {
      const granted = await store.grantLeases(token, [{ jobId, workerId }], ttlMs);
      expect(granted).toHaveLength(1);
      return granted[0]!;
    }

    describe('job leases and fencing tokens', () => {
      it('grants exactly one lease when 50 grants for one job race', async () => {
        const { token, ready } = await startedRun();
        const attempts = Array.from({ length: 50 }, (_, i) => store.grantLeases(token, [{ jobId: ready.id, workerId: `w${i}` }], LONG_TTL_MS));
        const granted = (await Promise.all(attempts)).flat();
        expect(granted).toHaveLength(1);
        const job = await store.getJob(ready.id);
        expect(job.state).toBe('leased');
        expect(job.fence).toBe(ready.fence + 1);
        expect(job.attempt).toBe(1);
        expect(job.holder).toBe(granted[0]!.workerId);
        expect(granted[0]!.fence).toBe(job.fence);
        expect((await store.listLeasedJobs(granted[0]!.workerId)).map((j) => j.id)).toEqual([ready.id]);
      });

      it('grants a batch in one call and refuses jobs that are not ready', async () => {
        const { token, ready, waiting } = await startedRun();
        const granted = await store.grantLeases(
          token,
          [
            { jobId: ready.id, workerId: 'w1' },
            { jobId: waiting.id, workerId: 'w2' },
            { jobId: ready.id, workerId: 'w3' },
          ],
          LONG_TTL_MS,
        );
        expect(granted.map((g) => [g.jobId, g.workerId])).toEqual([[ready.id, 'w1']]);
        expect(granted[0]).toMatchObject({ taskId: 'a', attempt: 1, fence: ready.fence + 1 });
        expect((await store.getJob(waiting.id)).state).toBe('waiting');
      });

      it('grants for several shards in one call, each under its own token', async () => {
        const one = await startedRun();
        const two = await startedRun();
        const three = await startedRun();
        // The third shard's leader is deposed before the call.
        await store.releaseShard(three.token);
        const out = await store.grantLeasesMany(
          [
            // A grant naming another shard's job does not land through this token.
            { token: one.token, grants: [{ jobId: one.ready.id, workerId: 'w1' }, { jobId: two.ready.id, workerId: 'w1' }] },
            { token: two.token, grants: [{ jobId: two.ready.id, workerId: 'w2' }, { jobId: two.waiting.id, workerId: 'w2' }] },
            { token: three.token, grants: [{ jobId: three.ready.id, workerId: 'w3' }] },
          ],
          LONG_TTL_MS,
        );
        expect(Array.isArray(out[0]) && out[0].map((g) => [g.jobId, g.workerId, g.fence])).toEqual([[one.ready.id, 'w1', 1]]);
        expect(Array.isArray(out[1]) && out[1].map((g) => [g.jobId, g.workerId])).toEqual([[two.ready.id, 'w2']]);
        expect(out[2]).toBeInstanceOf(Error);
        expect((out[2] as FencelineError).code).toBe('DEPOSED_LEADER');
        expect((await store.getJob(three.ready.id)).state).toBe('ready');
        expect((await store.getJob(two.waiting.id)).state).toBe('waiting');
        expect(await store.grantLeasesMany([], LONG_TTL_MS)).toEqual([]);
      });

      it('raises the fence by one on every lease and every revocation', async () => {
        const { token, ready } = await startedRun({ maxAttempts: 3, retryBackoffMs: 0 });
        const f0 = ready.fence;
        const first = await grantOne(token, ready.id, 'w1');
        expect(first.fence).toBe(f0 + 1);
        const released = await store.releaseJob({ jobId: ready.id, fence: first.fence, workerId: 'w1' });
        expect(released).toMatchObject({ state: 'ready', fence: f0 + 2, attempt: 0, holder: null });
        const second = await grantOne(token, ready.id, 'w2', SHORT_TTL_MS);
        expect(second).toMatchObject({ fence: f0 + 3, attempt: 1 });
        // A renewal leaves the fence alone, and makes the expiry below a counted attempt.
        expect((await store.renewLeases([{ jobId: ready.id, fence: second.fence, workerId: 'w2' }], SHORT_TTL_MS))[0]).toMatchObject({ ok: true });
        await h.advanceMs(PAST_TTL_MS);
        const swept = await store.sweepExpired(token, 100);
        expect(swept).toEqual([expect.objectContaining({ jobId: ready.id, previousHolder: 'w2', fence: f0 + 4, state: 'ready' })]);
        const third = await grantOne(token, ready.id, 'w3');
        expect(third).toMatchObject({ fence: f0 + 5, attempt: 2 });
      });

      it('renews a live lease, and refuses an old fence as STALE_FENCE and a higher one as FORGED_FENCE', async () => {
        const { token, ready } = await startedRun();
        const old = await grantOne(token, ready.id, 'w1');
        await store.releaseJob({ jobId: ready.id, fence: old.fence, workerId: 'w1' });
        const current = await grantOne(token, ready.id, 'w2', MEDIUM_TTL_MS);
        const outcomes = await store.renewLeases(
          [
            { jobId: ready.id, fence: old.fence, workerId: 'w1' },
            { jobId: ready.id, fence: current.fence + 1, workerId: 'w2' },
            { jobId: ready.id, fence: current.fence, workerId: 'w1' },
            { jobId: '999999999999', fence: 1, workerId: 'w2' },
            { jobId: ready.id, fence: current.fence, workerId: 'w2' },
          ],
          LONG_TTL_MS,
        );
        expect(outcomes.map((o) => (o.ok ? 'OK' : o.code))).toEqual(['STALE_FENCE', 'FORGED_FENCE', 'LEASE_LOST', 'NOT_FOUND', 'OK']);
        expect(outcomes.map((o) => o.jobId)).toEqual([ready.id, ready.id, ready.id, '999999999999', ready.id]);
        const renewed = outcomes[4]!;
        expect(renewed.ok && renewed.leaseExpiresAt.getTime()).toBeGreaterThan(current.leaseExpiresAt.getTime());
        // The renewal outlives the TTL the lease was granted with.
        await h.advanceMs(PAST_MEDIUM_TTL_MS);
        expect(await store.sweepExpired(token, 100)).toEqual([]);
        expect((await store.getJob(ready.id)).holder).toBe('w2');
      });

      it('refuses a result write with a stale or forged fence and leaves the result store unchanged', async () => {
        const { token, ready } = await startedRun();
        const old = await grantOne(token, ready.id, 'w1');
        await store.releaseJob({ jobId: ready.id, fence: old.fence, workerId: 'w1' });
        const current = await grantOne(token, ready.id, 'w2');

        const stale = await refusedWith(store.completeJob({ jobId: ready.id, fence: old.fence, workerId: 'w1' }, { output: { by: 'w1' } }), 'STALE_FENCE');
        expect(stale.details).toMatchObject({ jobId: ready.id, fence: old.fence, recordFence: current.fence });
        const forged = await refusedWith(
          store.completeJob({ jobId: ready.id, fence: current.fence + 1, workerId: 'w2' }, { output: { by: 'forger' } }),
          'FORGED_FENCE',
        );
        expect(forged.details).toMatchObject({ jobId: ready.id, fence: current.fence + 1, recordFence: current.fence });
        await refusedWith(store.failJob({ jobId: ready.id, fence: old.fence, workerId: 'w1' }, { error: 'late', retryable: true }), 'STALE_FENCE');
        expect(await store.getResult(ready.id)).toBeNull();
        expect(await store.getJob(ready.id)).toMatchObject({ state: 'leased', holder: 'w2', fence: current.fence });

        const done = await store.completeJob({ jobId: ready.id, fence: current.fence, workerId: 'w2' }, { output: { by: 'w2' }, logs: 'ok' });
        expect(done).toMatchObject({ state: 'succeeded', fence: current.fence });
        expect(done.endedAt).toBeInstanceOf(Date);
        const result = await store.getResult(ready.id);
        expect(result).toMatchObject({ jobId: ready.id, fence: current.fence, workerId: 'w2', outcome: 'succeeded', output: { by: 'w2' }, logs: 'ok' });

        await refusedWith(store.completeJob({ jobId: ready.id, fence: old.fence, workerId: 'w1' }, { output: { by: 'w1' } }), 'STALE_FENCE');
        await refusedWith(store.completeJob({ jobId: ready.id, fence: current.fence, workerId: 'w2' }, { output: { again: true } }), 'LEASE_LOST');
        expect(await store.getResult(ready.id)).toEqual(result);
      });

      it('refuses a result over the size limit and writes nothing', async () => {
        const { token, ready } = await startedRun();
        const lease = await grantOne(token, ready.id, 'w1');
        const ref = { jobId: ready.id, fence: lease.fence, workerId: 'w1' };
        await refusedWith(store.completeJob(ref, { output: 'x'.repeat(300 * 1024) }), 'TOO_LARGE');
        expect(await store.getResult(ready.id)).toBeNull();
        expect((await store.getJob(ready.id)).state).toBe('leased');
      });

      it('completes a batch: each item fenced on its own, refusals typed, nothing written for them', async () => {
        const first = await startedRun();
        const second = await startedRun();
        const third = await startedRun();
        const l1 = await grantOne(first.token, first.ready.id, 'w1');
        const l2 = await grantOne(second.token, second.ready.id, 'w2');
        const l3 = await grantOne(third.token, third.ready.id, 'w3');
        const outcomes = await store.completeJobs([
          { ref: { jobId: first.ready.id, fence: l1.fence, workerId: 'w1' }, output: { n: 1 }, logs: 'one' },
          { ref: { jobId: second.ready.id, fence: l2.fence - 1, workerId: 'w2' }, output: { n: 2 } },
          { ref: { jobId: third.ready.id, fence: l3.fence, workerId: 'w3' }, output: 'x'.repeat(300 * 1024) },
          { ref: { jobId: '999999999997', fence: 1, workerId: 'w4' } },
          { ref: { jobId: first.ready.id, fence: l1.fence, workerId: 'w1' }, output: { n: 'again' } },
          { ref: { jobId: third.ready.id, fence: l3.fence + 1, workerId: 'w3' }, output: { n: 3 } },
        ]);
        expect(outcomes.map((o) => o.jobId)).toEqual([first.ready.id, second.ready.id, third.ready.id, '999999999997', first.ready.id, third.ready.id]);
        expect(outcomes.map((o) => (o.ok ? 'ok' : o.error.code))).toEqual(['ok', 'STALE_FENCE', 'TOO_LARGE', 'NOT_FOUND', 'LEASE_LOST', 'FORGED_FENCE']);
        expect(outcomes[0]!.ok && outcomes[0]!.row).toMatchObject({ id: first.ready.id, state: 'succeeded', fence: l1.fence });
        expect(await store.getResult(first.ready.id)).toMatchObject({ fence: l1.fence, workerId: 'w1', output: { n: 1 }, logs: 'one' });
        expect(await store.getResult(second.ready.id)).toBeNull();
        expect(await store.getResult(third.ready.id)).toBeNull();
        expect((await store.getJob(second.ready.id)).state).toBe('leased');
        expect((await store.getJob(third.ready.id)).state).toBe('leased');
        expect(await store.completeJobs([])).toEqual([]);
      });

      it('getJobs reads many jobs at once, in id order, leaving out ids that name no job', async () => {
        const one = await startedRun();
        const two = await startedRun();
        await grantOne(two.token, two.ready.id, 'w1');
        const ids = [two.ready.id, '999999999998', one.waiting.id, 'not-an-id', one.ready.id, two.ready.id];
        const got = await store.getJobs(ids);
        const expected = [one.ready, one.waiting, two.ready].map((j) => j.id).sort((a, b) => Number(BigInt(a) - BigInt(b)));
        expect(got.map((j) => j.id)).toEqual(expected);
        // Each row is the job as getJob reads it.
        for (const job of got) expect(job).toEqual(await store.getJob(job.id));
        expect(got.find((j) => j.id === two.ready.id)).toMatchObject({ state: 'leased', holder: 'w1' });
        expect(await store.getJobs([])).toEqual([]);
        await refusedWith(store.getJobs(Array.from({ length: LIMITS.maxJobsPerRead + 1 }, (_, i) => String(i + 1))), 'INVALID_INPUT');
      });

      it('refuses writes to a job that does not exist as NOT_FOUND', async () => {
        await refusedWith(store.completeJob({ jobId: '999999999998', fence: 1, workerId: 'w' }, {}), 'NOT_FOUND');
        await refusedWith(store.releaseJob({ jobId: '999999999998', fence: 1, workerId: 'w' }), 'NOT_FOUND');
        await refusedWith(store.getJob('999999999998'), 'NOT_FOUND');
      });

      it('sweeps an expired lease back to ready with a higher fence, and then refuses the old holder', async () => {
        const { token, ready } = await startedRun({ maxAttempts: 2, retryBackoffMs: 0 });
        const lease = await grantOne(token, ready.id, 'w1', SHORT_TTL_MS);
        const ref = { jobId: ready.id, fence: lease.fence, workerId: 'w1' };
        // Renewed once, so the holder had it: its expiry uses the attempt.
        expect((await store.renewLeases([ref], SHORT_TTL_MS))[0]).toMatchObject({ ok: true });
        await h.advanceMs(PAST_TTL_MS);
        // Expired but not yet swept: the fence still matches, the lease is gone.
        await refusedWith(store.completeJob(ref, { output: 1 }), 'LEASE_LOST');
        const [renewal] = await store.renewLeases([ref], LONG_TTL_MS);
        expect(renewal).toMatchObject({ ok: false, code: 'LEASE_LOST' });

        const swept = await store.sweepExpired(token, 100);
        expect(swept).toHaveLength(1);
        expect(swept[0]).toMatchObject({ jobId: ready.id, previousHolder: 'w1', fence: lease.fence + 1, state: 'ready', attemptCounted: true });
        expect(await store.getJob(ready.id)).toMatchObject({ state: 'ready', fence: lease.fence + 1, holder: null, attempt: 1 });

        await refusedWith(store.completeJob(ref, { output: 1 }), 'STALE_FENCE');
        await refusedWith(store.failJob(ref, { error: 'late', retryable: false }), 'STALE_FENCE');
        expect(await store.getResult(ready.id)).toBeNull();
        expect(await store.sweepExpired(token, 100)).toEqual([]);
      });

      it('fails the job when the sweep finds it out of attempts', async () => {
        const { token, ready } = await startedRun({ maxAttempts: 1 });
        const lease = await grantOne(token, ready.id, 'w1', SHORT_TTL_MS);
        await store.renewLeases([{ jobId: ready.id, fence: lease.fence, workerId: 'w1' }], SHORT_TTL_MS);
        await h.advanceMs(PAST_TTL_MS);
        const swept = await store.sweepExpired(token, 100);
        expect(swept).toEqual([expect.objectContaining({ jobId: ready.id, state: 'failed', nextAttemptAt: null, attemptCounted: true })]);
        const job = await store.getJob(ready.id);
        expect(job.state).toBe('failed');
        expect(job.endedAt).toBeInstanceOf(Date);
        expect(await store.grantLeases(token, [{ jobId: ready.id, workerId: 'w2' }], LONG_TTL_MS)).toEqual([]);
      });

      it('hands the attempt back when a lease expires unrenewed, at most LIMITS.maxLostLeases times', async () => {
        // One attempt and a long backoff: a counted expiry would fail the job, and a
        // backoff would show as a refused grant.
        const { token, ready } = await startedRun({ maxAttempts: 1, retryBackoffMs: MEDIUM_TTL_MS });
        for (let lost = 1; lost <= LIMITS.maxLostLeases; lost++) {
          const lease = await grantOne(token, ready.id, `w${lost}`, SHORT_TTL_MS);
          expect(lease.attempt).toBe(1);
          await h.advanceMs(PAST_TTL_MS);
          const swept = await store.sweepExpired(token, 100);
          expect(swept).toEqual([expect.objectContaining({ jobId: ready.id, state: 'ready', nextAttemptAt: null, attemptCounted: false, fence: lease.fence + 1 })]);
          const job = await store.getJob(ready.id);
          expect(job).toMatchObject({ state: 'ready', attempt: 0, holder: null });
          expect(job.lastError).toContain('not counted');
          // The old holder is fenced off as after any expiry.
          await refusedWith(store.completeJob({ jobId: ready.id, fence: lease.fence, workerId: `w${lost}` }, { output: 1 }), 'STALE_FENCE');
        }
        // The next unrenewed expiry counts, and with one attempt the job fails.
        await grantOne(token, ready.id, 'w-last', SHORT_TTL_MS);
        await h.advanceMs(PAST_TTL_MS);
        expect(await store.sweepExpired(token, 100)).toEqual([expect.objectContaining({ jobId: ready.id, state: 'failed', attemptCounted: true })]);
      });

      it('failJob retries after the backoff: a grant before it is refused, one after it succeeds', async () => {
        const { token, ready } = await startedRun({ maxAttempts: 2, retryBackoffMs: MEDIUM_TTL_MS });
        const lease = await grantOne(token, ready.id, 'w1');
        const before = await store.now();
        const failed = await store.failJob({ jobId: ready.id, fence: lease.fence, workerId: 'w1' }, { error: 'boom', retryable: true, logs: 'trace' });
        expect(failed).toMatchObject({ state: 'ready', fence: lease.fence, lastError: 'boom', attempt: 1 });
        expect(failed.nextAttemptAt!.getTime()).toBeGreaterThanOrEqual(before.getTime() + MEDIUM_TTL_MS);
        expect(await store.getResult(ready.id)).toMatchObject({ outcome: 'failed', error: 'boom', logs: 'trace', fence: lease.fence });
        expect(await store.grantLeases(token, [{ jobId: ready.id, workerId: 'w2' }], LONG_TTL_MS)).toEqual([]);

        await h.advanceMs(PAST_MEDIUM_TTL_MS);
        const retry = await grantOne(token, ready.id, 'w2');
        expect(retry).toMatchObject({ attempt: 2, fence: lease.fence + 1 });
        // The last attempt fails for good even though the failure is retryable.
        const final = await store.failJob({ jobId: ready.id, fence: retry.fence, workerId: 'w2' }, { error: 'boom again', retryable: true });
        expect(final).toMatchObject({ state: 'failed', nextAttemptAt: null });
        expect(await store.getResult(ready.id)).toMatchObject({ outcome: 'failed', error: 'boom again', fence: retry.fence, workerId: 'w2' });
      });

      it('a failure that is not retryable fails the job at once', async () => {
        const { token, ready } = await startedRun({ maxAttempts: 5 });
        const lease = await grantOne(token, ready.id, 'w1');
        const failed = await store.failJob({ jobId: ready.id, fence: lease.fence, workerId: 'w1' }, { error: 'bad input', retryable: false });
        expect(failed.state).toBe('failed');
        expect(failed.endedAt).toBeInstanceOf(Date);
      });
    });

    describe('shard leadership', () => {
      it('initCluster fixes the shard count on first call and reports it after', async () => {
        const first = await store.initCluster(SHARD_COUNT);
        expect(first.shardCount).toBeGreaterThan(0);
        expect(await store.initCluster(first.shardCount + 1)).toEqual(first);
      });

      it('acquireShard by a second node while the first holds it returns null', async () => {
        const { shard } = dagIdInFreshShard('lead');
        const first = await store.acquireShard(shard, 'node-a', LONG_TTL_MS);
        expect(first).toMatchObject({ reason: 'new', previousHolder: null });
        expect(await store.acquireShard(shard, 'node-b', LONG_TTL_MS)).toBeNull();
        // The same node id taking its own live lease again (a restarted process) gets a new
        // epoch: the earlier process's token must die with it.
        const reclaimed = await store.acquireShard(shard, 'node-a', LONG_TTL_MS);
        expect(reclaimed).toMatchObject({ reason: 'reclaimed', previousHolder: null, token: { shard, nodeId: 'node-a', epoch: first!.token.epoch + 1 } });
        const row = (await store.listShards()).find((s) => s.shard === shard);
        expect(row).toMatchObject({ holder: 'node-a', epoch: first!.token.epoch + 1 });
        await expect(store.renewShard(first!.token, LONG_TTL_MS)).rejects.toMatchObject({ code: 'DEPOSED_LEADER' });
      });

      it('release lets another node take over at once with epoch + 1', async () => {
        const { shard } = dagIdInFreshShard('lead');
        const first = await store.acquireShard(shard, 'node-a', LONG_TTL_MS);
        await store.releaseShard(first!.token);
        const second = await store.acquireShard(shard, 'node-b', LONG_TTL_MS);
        expect(second).toMatchObject({ reason: 'released', token: { shard, nodeId: 'node-b', epoch: first!.token.epoch + 1 } });
        await refusedWith(store.renewShard(first!.token, LONG_TTL_MS), 'DEPOSED_LEADER');
      });

      it('contentionView stamps a serving node alive and lists the serving nodes with every shard lease; leaveCluster forgets a node at once', async () => {
        const a = unique('node-a');
        const b = unique('node-b');
        const { shard } = dagIdInFreshShard('lead');
        const held = await store.acquireShard(shard, a, LONG_TTL_MS);
        const first = await store.contentionView(a, MEDIUM_TTL_MS, true);
        expect(first.nodes).toContain(a);
        expect(first.nodes).not.toContain(b);
        expect(first.shards.find((s) => s.shard === shard)).toMatchObject({ holder: a, epoch: held!.token.epoch });
        expect(Math.abs(first.now.getTime() - (await store.now()).getTime())).toBeLessThan(5_000);
        const seenByB = await store.contentionView(b, MEDIUM_TTL_MS, true);
        expect(seenByB.nodes).toEqual(expect.arrayContaining([a, b]));
        expect(seenByB.nodes).toEqual([...seenByB.nodes].sort());
        // A stays listed only as long as it keeps stamping itself.
        await h.advanceMs(PAST_MEDIUM_TTL_MS);
        const later = await store.contentionView(b, MEDIUM_TTL_MS, true);
        expect(later.nodes).toContain(b);
        expect(later.nodes).not.toContain(a);
        await store.contentionView(a, MEDIUM_TTL_MS, true);
        expect((await store.contentionView(b, MEDIUM_TTL_MS, true)).nodes).toContain(a);
        await store.leaveCluster(a);
        expect((await store.contentionView(b, MEDIUM_TTL_MS, true)).nodes).not.toContain(a);
      });

      it('a node that serves no workers reads the view without being listed, even by itself', async () => {
        const a = unique('node-a');
        const b = unique('node-b');
        const own = await store.contentionView(a, LONG_TTL_MS, false);
        expect(own.nodes).not.toContain(a);
        expect((await store.contentionView(b, LONG_TTL_MS, true)).nodes).not.toContain(a);
        // Once it serves it is listed; when it stops serving it is no longer listed by itself.
        await store.contentionView(a, LONG_TTL_MS, true);
        expect((await store.contentionView(b, LONG_TTL_MS, true)).nodes).toContain(a);
        expect((await store.contentionView(a, LONG_TTL_MS, false)).nodes).not.toContain(a);
      });

      it('contentionView refuses an empty node id or a bad window and stamps nothing', async () => {
        const b = unique('node-b');
        await refusedWith(store.contentionView('', 1_000, true), 'INVALID_INPUT');
        await refusedWith(store.contentionView(b, 0, true), 'INVALID_INPUT');
        await refusedWith(store.contentionView(b, 1.5, true), 'INVALID_INPUT');
        const c = unique('node-c');
        expect((await store.contentionView(c, LONG_TTL_MS, true)).nodes).not.toContain(b);
      });

      it('renewShard moves the expiry; after it lapses another node takes over with epoch + 1', async () => {
        const { shard } = dagIdInFreshShard('lead');
        const first = await store.acquireShard(shard, 'node-a', LONG_TTL_MS);
        const before = await store.now();
        const until = await store.renewShard(first!.token, SHORT_TTL_MS);
        expect(until.getTime()).toBeGreaterThanOrEqual(before.getTime() + SHORT_TTL_MS);
        expect(until.getTime()).toBeLessThan(first!.expiresAt.getTime());
        await h.advanceMs(PAST_TTL_MS);
        const second = await store.acquireShard(shard, 'node-b', LONG_TTL_MS);
        expect(second).toMatchObject({ reason: 'expired', previousHolder: 'node-a', token: { epoch: first!.token.epoch + 1 } });
        await refusedWith(store.renewShard(first!.token, LONG_TTL_MS), 'DEPOSED_LEADER');
      });

      it('a node whose own shard lease lapsed takes it again under a new epoch', async () => {
        const { shard } = dagIdInFreshShard('lead');
        const first = await store.acquireShard(shard, 'node-a', SHORT_TTL_MS);
        await h.advanceMs(PAST_TTL_MS);
        // Its old token must die with the lapse: the node may have missed what happened meanwhile.
        const again = await store.acquireShard(shard, 'node-a', LONG_TTL_MS);
        expect(again).toMatchObject({ reason: 'expired', previousHolder: 'node-a', token: { epoch: first!.token.epoch + 1 } });
        await refusedWith(store.queuedRuns(first!.token), 'DEPOSED_LEADER');
        expect(await store.queuedRuns(again!.token)).toEqual([]);
      });

      it('a write under an old epoch is refused with DeposedLeaderError and writes nothing', async () => {
        const { token: old, dagId } = await leadFreshShard(LONG_TTL_MS, 'deposed');
        // A one-second period: the slot is due (store time) before the runs are created.
        await store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const run = await store.triggerRun(dagId);
        const jobs = await store.startRun(old, run.id, newJobs());
        const ready = jobs.find((j) => j.taskId === 'a')!;
        const waiting = jobs.find((j) => j.taskId === 'b')!;
        const queued = await store.triggerRun(dagId);
        const dag = await store.getDag(dagId);
        // Shorten the shard lease only now, so the setup above cannot outlive it.
        await store.renewShard(old, SHORT_TTL_MS);
        const leased = await grantOne(old, ready.id, 'w1', SHORT_TTL_MS);

        await h.advanceMs(PAST_TTL_MS);
        const taken = await store.acquireShard(old.shard, unique('node'), LONG_TTL_MS);
        expect(taken).toMatchObject({ reason: 'expired', previousHolder: old.nodeId, token: { epoch: old.epoch + 1 } });

        await refusedWith(store.grantLeases(old, [{ jobId: ready.id, workerId: 'w2' }], LONG_TTL_MS), 'DEPOSED_LEADER');
        await refusedWith(store.startRun(old, queued.id, newJobs()), 'DEPOSED_LEADER');
        await refusedWith(store.promoteJobs(old, [waiting.id]), 'DEPOSED_LEADER');
        await refusedWith(store.markUpstreamFailed(old, [waiting.id]), 'DEPOSED_LEADER');
        await refusedWith(store.sweepExpired(old, 100), 'DEPOSED_LEADER');
        await refusedWith(store.finishRun(old, run.id, 'failed'), 'DEPOSED_LEADER');
        await refusedWith(store.queuedRuns(old), 'DEPOSED_LEADER');
        await refusedWith(store.loadShard(old), 'DEPOSED_LEADER');
        const slot = dag.nextRunAt!;
        await refusedWith(
          store.createScheduledRuns(old, dagId, slot, [slot], new Date(slot.getTime() + DUE_STEP_MS)),
          'DEPOSED_LEADER',
        );

        // Nothing the old leader tried landed.
        expect(await store.getJob(ready.id)).toMatchObject({ state: 'leased', fence: leased.fence, holder: 'w1' });
        expect((await store.getJob(waiting.id)).state).toBe('waiting');
        expect(await store.getRun(queued.id)).toMatchObject({ state: 'queued' });
        expect(await store.listJobs(queued.id)).toEqual([]);
        expect((await store.getRun(run.id)).state).toBe('running');
        expect((await store.getDag(dagId)).nextRunAt).toEqual(slot);
        expect((await store.listRuns({ dagId })).map((r) => r.trigger)).toEqual(['manual', 'manual']);

        // The new leader's token does what the old one could not.
        const now = taken!.token;
        await untilDue([slot.getTime()]);
        expect(await store.sweepExpired(now, 100)).toEqual([expect.objectContaining({ jobId: ready.id, previousHolder: 'w1' })]);
        expect(await store.promoteJobs(now, [waiting.id])).toEqual([waiting.id]);
        expect(await store.startRun(now, queued.id, newJobs())).toHaveLength(2);
        expect(await store.createScheduledRuns(now, dagId, slot, [slot], new Date(slot.getTime() + DUE_STEP_MS))).toHaveLength(1);
      });
    });

    describe('ticks and runs', () => {
      /**
       * A DAG whose first slot, and the next_run_at values the tests move it to after it,
       * are due: runs are never created before their slot (store time).
       */
      async function intervalDag() {
        const { token, dagId } = await leadFreshShard();
        await store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const dag = await store.getDag(dagId);
        expect(dag.nextRunAt).toBeInstanceOf(Date);
        await untilDue([dag.nextRunAt!.getTime() + 2 * DUE_STEP_MS]);
        return { token, dagId, slot: dag.nextRunAt! };
      }

      it('creates a run already started when asked: its jobs in the same write, only at the expected version and for one slot', async () => {
        const { token, dagId } = await leadFreshShard();
        const ids = idsInShard(dagId, token.shard, 4, '-s');
        for (const id of ids) await store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const slots = await Promise.all(ids.map(async (id) => (await store.getDag(id)).nextRunAt!));
        await untilDue(slots.map((d) => d.getTime() + DUE_STEP_MS));
        const start = { version: 1, jobs: newJobs() };
        const item = (i: number) => ({ dagId: ids[i]!, expectedNextRunAt: slots[i]!, slots: [slots[i]!], nextRunAt: new Date(slots[i]!.getTime() + 2 * DUE_STEP_MS) });
        const created = await store.createScheduledRunsAcross([
          {
            token,
            items: [
              // Started: one slot, the DAG at version 1.
              { ...item(0), start },
              // Queued: the DAG is at version 1, not 2.
              { ...item(1), start: { ...start, version: 2 } },
              // Queued: two slots are never started in the creating write.
              { ...item(2), slots: [slots[2]!, new Date(slots[2]!.getTime() + DUE_STEP_MS)], start },
              // Queued: nothing asked.
              item(3),
            ],
          },
        ]);
        const [started, wrongVersion, twoSlots, plain] = created[0] as CreatedRun[][];
        expect(started).toHaveLength(1);
        expect(started![0]).toMatchObject({ dagId: ids[0], state: 'running', scheduledAt: slots[0] });
        expect(started![0]!.startedAt).toBeInstanceOf(Date);
        expect(started![0]!.jobs!.map((j) => [j.taskId, j.state, j.runId, j.fence]).sort()).toEqual([
          ['a', 'ready', started![0]!.id, 0],
          ['b', 'waiting', started![0]!.id, 0],
        ]);
        expect((await store.listJobs(started![0]!.id)).map((j) => j.id).sort()).toEqual(started![0]!.jobs!.map((j) => j.id).sort());
        expect(await store.getRun(started![0]!.id)).toMatchObject({ state: 'running' });
        for (const list of [wrongVersion!, plain!]) {
          expect(list.map((r) => [r.state, r.jobs])).toEqual([['queued', undefined]]);
          expect(await store.listJobs(list[0]!.id)).toEqual([]);
        }
        expect(twoSlots!.map((r) => r.state)).toEqual(['queued', 'queued']);
        // The started run's jobs lease like any other.
        const ready = started![0]!.jobs!.find((j) => j.taskId === 'a')!;
        expect((await store.grantLeases(token, [{ jobId: ready.id, workerId: 'w1' }], LONG_TTL_MS)).map((g) => g.jobId)).toEqual([ready.id]);
      });

      it('creates no run before its slot: a DAG not yet due is left as it is', async () => {
        const { token, dagId } = await leadFreshShard();
        await store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 60_000 } }), SHARD_COUNT);
        const slot = (await store.getDag(dagId)).nextRunAt!;
        const next = new Date(slot.getTime() + 60_000);
        expect(await store.createScheduledRuns(token, dagId, slot, [slot], next)).toEqual([]);
        expect(await store.createScheduledRunsAcross([{ token, items: [{ dagId, expectedNextRunAt: slot, slots: [slot], nextRunAt: next }] }])).toEqual([[[]]]);
        expect((await store.getDag(dagId)).nextRunAt).toEqual(slot);
        expect(await store.listRuns({ dagId })).toEqual([]);
      });

      it('dueDags with a horizon also returns the DAGs due within it, and only those, leaving out skipped slots', async () => {
        const { token, dagId } = await leadFreshShard(LONG_TTL_MS, 'ahead');
        const [, near, far] = idsInShard(dagId, token.shard, 3, 'n') as [string, string, string];
        // Anchored on store time, so the near DAG is due in about 30 s and the far one in
        // about an hour whatever the time of day.
        const nowMs = (await store.now()).getTime();
        const anchored = (aheadMs: number) => ({ kind: 'interval' as const, everyMs: 86_400_000, anchor: new Date(nowMs + aheadMs).toISOString() });
        await store.putDag(spec(near, { schedule: anchored(30_000) }), SHARD_COUNT);
        await store.putDag(spec(far, { schedule: anchored(3_600_000) }), SHARD_COUNT);
        expect((await store.dueDags([token], 100)).dags).toEqual([]);
        const ahead = await store.dueDags([token], 100, undefined, { horizonMs: 120_000 });
        expect(ahead.dags.map((d) => d.id)).toEqual([near]);
        expect(ahead.dags[0]!.nextRunAt.getTime()).toBeGreaterThan(ahead.now.getTime());
        const all = await store.dueDags([token], 100, undefined, { horizonMs: 2 * 3_600_000 });
        expect(all.dags.map((d) => d.id)).toEqual([near, far]);
        // A slot the leader holds already is left out of the read; the others are not.
        const nearSlot = all.dags[0]!.nextRunAt;
        const skipping = await store.dueDags([token], 100, undefined, { horizonMs: 2 * 3_600_000, skipSlots: [nearSlot, new Date(nearSlot.getTime() + 1)] });
        expect(skipping.dags.map((d) => d.id)).toEqual([far]);
        await refusedWith(store.dueDags([token], 100, undefined, { skipSlots: Array.from({ length: LIMITS.maxSkippedSlots + 1 }, (_, i) => new Date(i)) }), 'INVALID_INPUT');
      });

      it('a tick run twice creates one run per (dag, scheduled_at)', async () => {
        const { token, dagId, slot } = await intervalDag();
        const next = new Date(slot.getTime() + DUE_STEP_MS);
        const created = await store.createScheduledRuns(token, dagId, slot, [slot], next);
        expect(created).toEqual([expect.objectContaining({ dagId, scheduledAt: slot, trigger: 'schedule', state: 'queued', dagVersion: 1 })]);
        // The same tick again: next_run_at has moved, so the compare-and-set writes nothing.
        expect(await store.createScheduledRuns(token, dagId, slot, [slot], next)).toEqual([]);
        // A later tick whose catch-up overlaps an existing slot creates only the new one.
        const after = new Date(next.getTime() + DUE_STEP_MS);
        const second = await store.createScheduledRuns(token, dagId, next, [slot, next], after);
        expect(second.map((r) => r.scheduledAt)).toEqual([next]);
        expect((await store.getDag(dagId)).nextRunAt).toEqual(after);
        const runs = await store.listRuns({ dagId });
        expect(runs.map((r) => r.scheduledAt.getTime()).sort()).toEqual([slot.getTime(), next.getTime()]);
        expect((await store.queuedRuns(token)).map((r) => r.id).sort()).toEqual(runs.map((r) => r.id).sort());
      });

      it('two leaders racing create one run per (dag, scheduled_at)', async () => {
        const { token, dagId, slot } = await intervalDag();
        const next = new Date(slot.getTime() + DUE_STEP_MS);
        // Two ticks of one leader in flight at once.
        const racing = await Promise.all([
          store.createScheduledRuns(token, dagId, slot, [slot], next),
          store.createScheduledRuns(token, dagId, slot, [slot], next),
        ]);
        expect(racing.flat()).toHaveLength(1);
        // A failover: the new leader's first tick re-covers the slot the old one already ran.
        await store.releaseShard(token);
        const successor = await store.acquireShard(token.shard, unique('node'), LONG_TTL_MS);
        const after = new Date(next.getTime() + DUE_STEP_MS);
        const both = await Promise.allSettled([
          store.createScheduledRuns(token, dagId, next, [slot, next], after),
          store.createScheduledRuns(successor!.token, dagId, next, [slot, next], after),
        ]);
        expect(both[0].status).toBe('rejected');
        expect(both[1].status === 'fulfilled' && both[1].value.map((r) => r.scheduledAt)).toEqual([next]);
        const slots = (await store.listRuns({ dagId })).map((r) => r.scheduledAt.getTime());
        expect(slots.sort()).toEqual([slot.getTime(), next.getTime()]);
      });

      it('dueDags returns the due, unpaused DAGs of the shards the tokens lead', async () => {
        const { token, dagId } = await leadFreshShard();
        await store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const other = await leadFreshShard();
        await store.putDag(spec(other.dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        await h.advanceMs(1_100);
        const due = await store.dueDags([token], 100);
        expect(due.dags.map((d) => d.id)).toEqual([dagId]);
        expect(due.dags[0]).toMatchObject({ shard: token.shard, version: 1 });
        expect(due.dags[0]!.spec.id).toBe(dagId);
        expect(due.dags[0]!.nextRunAt.getTime()).toBeLessThanOrEqual(due.now.getTime());
        // A token that no longer leads contributes nothing.
        await store.releaseShard(other.token);
        expect((await store.dueDags([token, other.token], 100)).dags.map((d) => d.id)).toEqual([dagId]);
        await store.setPaused(dagId, true);
        expect((await store.dueDags([token], 100)).dags).toEqual([]);
      });

      it('dueDags pages by (next_run_at, id): the pages together are the whole list, in order, each DAG once', async () => {
        const { token, dagId } = await leadFreshShard(LONG_TTL_MS, 'page');
        const ids = idsInShard(dagId, token.shard, 5, 'x');
        // Two periods, so the order mixes next_run_at and id ties.
        for (const [i, id] of ids.entries()) await store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: i % 2 === 0 ? 1_000 : 1_500 } }), SHARD_COUNT);
        await h.advanceMs(1_600);
        const whole = (await store.dueDags([token], 100)).dags;
        expect(whole.map((d) => d.id).sort()).toEqual([...ids].sort());
        const paged: string[] = [];
        let after: DuePageKey | undefined;
        for (let page = 0; page < 10; page++) {
          const { dags } = await store.dueDags([token], 2, after);
          paged.push(...dags.map((d) => d.id));
          if (dags.length < 2) break;
          after = { nextRunAt: dags[1]!.nextRunAt, id: dags[1]!.id };
        }
        expect(paged).toEqual(whole.map((d) => d.id));
        for (let i = 1; i < whole.length; i++) expect(whole[i]!.nextRunAt.getTime()).toBeGreaterThanOrEqual(whole[i - 1]!.nextRunAt.getTime());
      });

      it('reads many DAG versions at once, leaving out the ones that do not exist', async () => {
        const { dagId } = await leadFreshShard();
        await store.putDag(spec(dagId), SHARD_COUNT);
        await store.putDag(spec(dagId, { tasks: [{ id: 'only', type: 'noop' }] }), SHARD_COUNT);
        const rows = await store.getDagVersions([
          { dagId, version: 2 },
          { dagId, version: 7 },
          { dagId: `${dagId}-missing`, version: 1 },
          { dagId, version: 1 },
        ]);
        expect(rows.map((r) => `${r.dagId}@${r.version}`).sort()).toEqual([`${dagId}@1`, `${dagId}@2`]);
        expect(rows.find((r) => r.version === 2)!.spec.tasks.map((t) => t.id)).toEqual(['only']);
        expect(await store.getDagVersions([])).toEqual([]);
      });

      it('runs pin the version they were created under', async () => {
        const { token, dagId } = await leadFreshShard();
        await store.putDag(spec(dagId), SHARD_COUNT);
        const first = await store.triggerRun(dagId);
        const changed = await store.putDag(spec(dagId, { tasks: [{ id: 'a', type: 'noop' }, { id: 'c', type: 'noop' }] }), SHARD_COUNT);
        expect(changed).toEqual({ dagId, version: 2, created: true });
        const second = await store.triggerRun(dagId);
        expect(first.dagVersion).toBe(1);
        expect(second.dagVersion).toBe(2);
        expect((await store.getRun(first.id)).dagVersion).toBe(1);
        const snapshot = await store.loadShard(token);
        expect(snapshot.versions.get(`${dagId}@1`)?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
        expect(snapshot.versions.get(`${dagId}@2`)?.tasks.map((t) => t.id)).toEqual(['a', 'c']);
      });

      it('starts a queued run once and walks its jobs and the run to the end', async () => {
        const { token, run, ready, waiting } = await startedRun();
        expect(await store.getRun(run.id)).toMatchObject({ state: 'running' });
        expect((await store.getRun(run.id)).startedAt).toBeInstanceOf(Date);
        expect(await store.startRun(token, run.id, newJobs())).toEqual([]);
        expect(ready).toMatchObject({ state: 'ready', fence: 0, attempt: 0, runId: run.id, shard: token.shard });
        expect(ready.readyAt).toBeInstanceOf(Date);
        expect(waiting).toMatchObject({ state: 'waiting', readyAt: null });

        const snapshot = await store.loadShard(token);
        expect(snapshot.runs.map((r) => r.id)).toContain(run.id);
        expect(snapshot.jobs.filter((j) => j.runId === run.id)).toHaveLength(2);

        const lease = await grantOne(token, ready.id, 'w1');
        await store.completeJob({ jobId: ready.id, fence: lease.fence, workerId: 'w1' }, { output: null });
        expect(await store.promoteJobs(token, [waiting.id])).toEqual([waiting.id]);
        expect(await store.promoteJobs(token, [waiting.id])).toEqual([]);
        expect(await store.markUpstreamFailed(token, [waiting.id])).toEqual([waiting.id]);
        expect((await store.getJob(waiting.id)).state).toBe('upstream_failed');
        expect(await store.finishRun(token, run.id, 'failed')).toBe(true);
        expect(await store.finishRun(token, run.id, 'succeeded')).toBe(false);
        expect(await store.getRun(run.id)).toMatchObject({ state: 'failed' });
        expect((await store.listJobs(run.id)).map((j) => j.state)).toEqual(['succeeded', 'upstream_failed']);
        expect((await store.loadShard(token)).runs.map((r) => r.id)).not.toContain(run.id);
      });

      it('creates, starts and finishes the runs of many DAGs in one call each, deciding every item on its own', async () => {
        const { token, dagId } = await leadFreshShard();
        // More DAGs in the same shard: ids are searched until they land there.
        const ids = idsInShard(dagId, token.shard, 3, '-m');
        for (const id of ids) await store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const slots = await Promise.all(ids.map(async (id) => (await store.getDag(id)).nextRunAt!));
        await untilDue(slots.map((d) => d.getTime()));
        const items = ids.map((id, i) => ({ dagId: id, expectedNextRunAt: slots[i]!, slots: [slots[i]!], nextRunAt: new Date(slots[i]!.getTime() + DUE_STEP_MS) }));
        // The third item's expectation is wrong (its next_run_at is elsewhere), and the
        // first DAG is named twice: it is written once, for its first item.
        items[2] = { ...items[2]!, expectedNextRunAt: new Date(slots[2]!.getTime() - 1) };
        const created = await store.createScheduledRunsMany(token, [...items, items[0]!]);
        expect(created.map((list) => list.length)).toEqual([1, 1, 0, 0]);
        expect(created[0]![0]).toMatchObject({ dagId: ids[0], scheduledAt: slots[0], state: 'queued' });
        expect((await store.getDag(ids[2]!)).nextRunAt).toEqual(slots[2]);

        const [a, b] = [created[0]![0]!, created[1]![0]!];
        const started = await store.startRuns(token, [
          { runId: a.id, jobs: newJobs() },
          { runId: b.id, jobs: newJobs() },
          { runId: a.id, jobs: newJobs() },
        ]);
        expect(started.map((jobs) => jobs.map((j) => j.taskId).sort())).toEqual([['a', 'b'], ['a', 'b'], []]);
        expect(started[1]!.every((j) => j.runId === b.id)).toBe(true);
        expect((await store.listJobs(a.id)).length).toBe(2);

        const finished = await store.finishRuns(token, [
          { runId: a.id, state: 'succeeded' },
          { runId: b.id, state: 'failed' },
          { runId: a.id, state: 'failed' },
        ]);
        expect(finished).toEqual([true, true, false]);
        expect((await store.getRun(a.id)).state).toBe('succeeded');
        expect((await store.getRun(b.id)).state).toBe('failed');
        expect(await store.finishRuns(token, [{ runId: a.id, state: 'failed' }])).toEqual([false]);
        // A deposed leader's batches write nothing.
        await store.releaseShard(token);
        await refusedWith(store.createScheduledRunsMany(token, [items[2]!]), 'DEPOSED_LEADER');
        await refusedWith(store.finishRuns(token, [{ runId: a.id, state: 'failed' }]), 'DEPOSED_LEADER');
      });

      it('writes for several leaders in one call, each group under its own token and in its own shard', async () => {
        // Fresh shards (and fresh DAGs) per leader; the third leader is deposed before the calls.
        const leaders = [await leadFreshShard(), await leadFreshShard(), await leadFreshShard()];
        for (const l of leaders) await store.putDag(spec(l.dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const slots = await Promise.all(leaders.map(async (l) => (await store.getDag(l.dagId)).nextRunAt!));
        await untilDue(slots.map((d) => d.getTime()));
        const item = (i: number) => ({ dagId: leaders[i]!.dagId, expectedNextRunAt: slots[i]!, slots: [slots[i]!], nextRunAt: new Date(slots[i]!.getTime() + DUE_STEP_MS) });
        await store.releaseShard(leaders[2]!.token);
        const [one, two, three] = leaders.map((l) => l.token) as [LeaderToken, LeaderToken, LeaderToken];

        // The second DAG is named first through the wrong token (it lies in another
        // shard), so nothing is written for it: a DAG named twice counts its first item.
        const created = await store.createScheduledRunsAcross([
          { token: one, items: [item(0), item(1)] },
          { token: two, items: [item(1)] },
          { token: three, items: [item(2)] },
        ]);
        expect((created[0] as RunRow[][]).map((l) => l.length)).toEqual([1, 0]);
        expect((created[1] as RunRow[][]).map((l) => l.length)).toEqual([0]);
        expect((created[2] as FencelineError).code).toBe('DEPOSED_LEADER');
        expect((await store.getDag(leaders[1]!.dagId)).nextRunAt).toEqual(slots[1]);
        expect((await store.getDag(leaders[2]!.dagId)).nextRunAt).toEqual(slots[2]);
        const second = (await store.createScheduledRunsAcross([{ token: two, items: [item(1)] }]))[0] as RunRow[][];
        const [runA, runB] = [(created[0] as RunRow[][])[0]![0]!, second[0]![0]!];

        const started = await store.startRunsAcross([
          { token: one, items: [{ runId: runA.id, jobs: newJobs() }, { runId: runB.id, jobs: newJobs() }] },
          { token: two, items: [{ runId: runB.id, jobs: newJobs() }] },
          { token: three, items: [] },
        ]);
        expect((started[0] as JobRow[][]).map((l) => l.length)).toEqual([2, 0]);
        expect((started[1] as JobRow[][]).map((l) => l.length)).toEqual([0]);
        expect((started[2] as FencelineError).code).toBe('DEPOSED_LEADER');
        expect((await store.getRun(runB.id)).state).toBe('queued');
        const jobsB = (((await store.startRunsAcross([{ token: two, items: [{ runId: runB.id, jobs: newJobs() }] }]))[0]) as JobRow[][])[0]!;
        const waitingA = (started[0] as JobRow[][])[0]!.find((j) => j.taskId === 'b')!;
        const waitingB = jobsB.find((j) => j.taskId === 'b')!;

        const promoted = await store.promoteJobsAcross([
          { token: one, items: [waitingA.id, waitingB.id] },
          { token: three, items: [waitingB.id] },
        ]);
        expect(promoted[0]).toEqual([waitingA.id]);
        expect((promoted[1] as FencelineError).code).toBe('DEPOSED_LEADER');
        expect((await store.getJob(waitingB.id)).state).toBe('waiting');
        const skipped = await store.markUpstreamFailedAcross([
          { token: two, items: [waitingB.id, waitingA.id] },
        ]);
        expect(skipped).toEqual([[waitingB.id]]);

        const finished = await store.finishRunsAcross([
          { token: one, items: [{ runId: runA.id, state: 'succeeded' }, { runId: runB.id, state: 'failed' }] },
          { token: two, items: [{ runId: runB.id, state: 'failed' }, { runId: runB.id, state: 'succeeded' }] },
          { token: three, items: [{ runId: runA.id, state: 'failed' }] },
        ]);
        // The second run's first item went through the wrong token, so neither moves it.
        expect(finished.slice(0, 2)).toEqual([[true, false], [false, false]]);
        expect((finished[2] as FencelineError).code).toBe('DEPOSED_LEADER');
        expect((await store.getRun(runA.id)).state).toBe('succeeded');
        expect((await store.getRun(runB.id)).state).toBe('running');
        expect(await store.finishRunsAcross([{ token: two, items: [{ runId: runB.id, state: 'failed' }] }])).toEqual([[true]]);
        expect((await store.getRun(runB.id)).state).toBe('failed');
        expect(await store.finishRunsAcross([])).toEqual([]);
      });

      it('refuses to start a run with more jobs than a run may hold, and fails such a run from the queue', async () => {
        const { token, dagId } = await leadFreshShard();
        await store.putDag(spec(dagId), SHARD_COUNT);
        const [big, small] = [await store.triggerRun(dagId), await store.triggerRun(dagId)];
        const template = newJobs()[0]!;
        const tooMany = Array.from({ length: LIMITS.maxTasksPerDag + 1 }, (_, k) => ({ ...template, taskId: `t${k}` }));
        // Refused as a whole, before anything is written: the run beside it stays queued too.
        const refused = await refusedWith(store.startRuns(token, [{ runId: small.id, jobs: newJobs() }, { runId: big.id, jobs: tooMany }]), 'INVALID_INPUT');
        expect(refused.message).toContain(`at most ${LIMITS.maxTasksPerDag} jobs`);
        await refusedWith(store.startRunsAcross([{ token, items: [{ runId: big.id, jobs: tooMany }] }]), 'INVALID_INPUT');
        expect((await store.getRun(small.id)).state).toBe('queued');
        expect((await store.getRun(big.id)).state).toBe('queued');

        // A queued run may fail (it can never start), but not succeed.
        expect(await store.finishRuns(token, [{ runId: big.id, state: 'succeeded' }])).toEqual([false]);
        expect(await store.finishRuns(token, [{ runId: big.id, state: 'failed' }])).toEqual([true]);
        expect(await store.getRun(big.id)).toMatchObject({ state: 'failed', startedAt: null });
        expect((await store.getRun(big.id)).endedAt).toBeInstanceOf(Date);
        expect(await store.finishRuns(token, [{ runId: big.id, state: 'failed' }])).toEqual([false]);
        expect((await store.startRuns(token, [{ runId: small.id, jobs: newJobs() }]))[0]).toHaveLength(2);

        // A tick's write that would start such a run is refused whole, too, writing nothing.
        const { token: scheduledToken, dagId: scheduled } = await leadFreshShard();
        await store.putDag(spec(scheduled, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
        const slot = (await store.getDag(scheduled)).nextRunAt!;
        await untilDue([slot.getTime()]);
        const item = { dagId: scheduled, expectedNextRunAt: slot, slots: [slot], nextRunAt: new Date(slot.getTime() + DUE_STEP_MS), start: { version: 1, jobs: tooMany } };
        await refusedWith(store.createScheduledRunsMany(scheduledToken, [item]), 'INVALID_INPUT');
        expect((await store.getDag(scheduled)).nextRunAt).toEqual(slot);
        expect(await store.listRuns({ dagId: scheduled, limit: 10 })).toEqual([]);
      });

      it('triggerRun queues a manual run and notifies subscribers', async () => {
        const { dagId } = await leadFreshShard();
        await store.putDag(spec(dagId), SHARD_COUNT);
        const seen: StoreNotice[] = [];
        const unsubscribe = await store.subscribe((n) => seen.push(n));
        try {
          const run = await store.triggerRun(dagId);
          expect(run).toMatchObject({ dagId, trigger: 'manual', state: 'queued', dagVersion: 1 });
          await eventually(() => seen.some((n) => n.kind === 'run-queued' && n.runId === run.id));
          await store.notify({ kind: 'job-ended', shard: 1, jobId: '42' });
          await eventually(() => seen.some((n) => n.kind === 'job-ended' && n.jobId === '42'));
          // A notice of several jobs arrives with its whole list.
          await store.notify({ kind: 'job-ended', shard: 1, jobId: '43', jobIds: ['43', '44', '45'] });
          await eventually(() => seen.some((n) => n.kind === 'job-ended' && n.jobId === '43'));
          expect(seen.find((n) => n.kind === 'job-ended' && n.jobId === '43')).toEqual({ kind: 'job-ended', shard: 1, jobId: '43', jobIds: ['43', '44', '45'] });
        } finally {
          await unsubscribe();
        }
        await refusedWith(store.triggerRun(unique('missing')), 'NOT_FOUND');
      });
    });

    describe('DAGs', () => {
      it('putDag refuses an invalid DAG and leaves the store unchanged', async () => {
        const { dagId } = dagIdInFreshShard('invalid');
        const cyclic = spec(dagId, {
          tasks: [
            { id: 'a', type: 'noop', dependsOn: ['b'] },
            { id: 'b', type: 'noop', dependsOn: ['a'] },
          ],
        });
        await refusedWith(store.putDag(cyclic, SHARD_COUNT), 'INVALID_DAG');
        await refusedWith(store.getDag(dagId), 'NOT_FOUND');
        expect((await store.listDags({ search: dagId })).rows).toEqual([]);

        await store.putDag(spec(dagId), SHARD_COUNT);
        await refusedWith(store.putDag(cyclic, SHARD_COUNT), 'INVALID_DAG');
        expect((await store.getDag(dagId)).version).toBe(1);
        expect(await store.listDagVersions(dagId)).toHaveLength(1);
      });

      it('the same spec twice creates one version', async () => {
        const { dagId, shard } = dagIdInFreshShard('same');
        expect(await store.putDag(spec(dagId), SHARD_COUNT)).toEqual({ dagId, version: 1, created: true });
        // Key order and filled-in defaults do not make a spec different.
        const reordered = { tasks: [{ type: 'noop', id: 'a' }, { dependsOn: ['a'], id: 'b', type: 'noop', retries: 0 }], id: dagId };
        expect(await store.putDag(reordered, SHARD_COUNT)).toEqual({ dagId, version: 1, created: false });
        expect(await store.listDagVersions(dagId)).toHaveLength(1);
        const dag = await store.getDag(dagId);
        expect(dag).toMatchObject({ id: dagId, shard, version: 1, paused: false, nextRunAt: null });
        expect(dag.spec.tasks.map((t) => t.id)).toEqual(['a', 'b']);
        expect((await store.getDagVersion(dagId, 1)).spec).toEqual(dag.spec);
        await refusedWith(store.getDagVersion(dagId, 2), 'NOT_FOUND');
      });

      it('concurrent puts of one DAG create consecutive versions', async () => {
        const { dagId } = dagIdInFreshShard('concurrent');
        await store.putDag(spec(dagId), SHARD_COUNT);
        const puts = await Promise.all(
          ['one', 'two', 'three'].map((description) => store.putDag(spec(dagId, { description }), SHARD_COUNT)),
        );
        expect(puts.map((p) => p.version).sort()).toEqual([2, 3, 4]);
        expect((await store.listDagVersions(dagId)).map((v) => v.version)).toEqual([1, 2, 3, 4]);
        expect((await store.getDag(dagId)).version).toBe(4);
      });

      it('a new version moves next_run_at only when the schedule changed', async () => {
        const { dagId } = dagIdInFreshShard('sched');
        await store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 3_600_000 } }), SHARD_COUNT);
        const v1 = await store.getDag(dagId);
        expect(v1.nextRunAt!.getTime() % 3_600_000).toBe(0);
        await store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 3_600_000 }, description: 'edited' }), SHARD_COUNT);
        const v2 = await store.getDag(dagId);
        expect(v2.version).toBe(2);
        expect(v2.nextRunAt).toEqual(v1.nextRunAt);
        await store.putDag(spec(dagId, { schedule: { kind: 'manual' }, description: 'edited' }), SHARD_COUNT);
        expect(await store.getDag(dagId)).toMatchObject({ version: 3, nextRunAt: null });
      });

      it('takes paused from the spec on creation only, and setPaused changes it', async () => {
        const { dagId } = dagIdInFreshShard('paused');
        await store.putDag(spec(dagId, { paused: true }), SHARD_COUNT);
        expect((await store.getDag(dagId)).paused).toBe(true);
        expect((await store.setPaused(dagId, false)).paused).toBe(false);
        await store.putDag(spec(dagId, { paused: true, description: 'v2' }), SHARD_COUNT);
        expect(await store.getDag(dagId)).toMatchObject({ version: 2, paused: false });
        await refusedWith(store.setPaused(unique('missing'), true), 'NOT_FOUND');
      });

      it('lists DAGs by search with a total, in pages', async () => {
        const prefix = unique('list');
        for (const n of [1, 2, 3]) await store.putDag(spec(`${prefix}-${n}`), SHARD_COUNT);
        const all = await store.listDags({ search: prefix, sort: 'id', direction: 'asc' });
        expect(all.total).toBe(3);
        expect(all.rows.map((d) => d.id)).toEqual([`${prefix}-1`, `${prefix}-2`, `${prefix}-3`]);
        const page = await store.listDags({ search: prefix.toUpperCase(), sort: 'id', direction: 'desc', limit: 1, offset: 1 });
        expect(page.rows.map((d) => d.id)).toEqual([`${prefix}-2`]);
        expect(page.total).toBe(3);
      });
    });

    describe('workers and the event log', () => {
      it('lists workers seen within a window; a heartbeat brings one back', async () => {
        const a = unique('worker');
        const b = unique('worker');
        await store.registerWorker({ id: a, slots: 4, nodeId: 'n1', meta: { host: 'x' } });
        await store.registerWorker({ id: b, slots: 2, nodeId: null });
        const seen = (await store.listWorkers(LONG_TTL_MS)).filter((w) => w.id === a || w.id === b);
        expect(seen.map((w) => w.id).sort()).toEqual([a, b].sort());
        expect(seen.find((w) => w.id === a)).toMatchObject({ slots: 4, nodeId: 'n1', meta: { host: 'x' } });
        await h.advanceMs(PAST_TTL_MS);
        await store.heartbeatWorkers([a], 'n2');
        const recent = (await store.listWorkers(SHORT_TTL_MS)).filter((w) => w.id === a || w.id === b);
        expect(recent.map((w) => [w.id, w.nodeId])).toEqual([[a, 'n2']]);
      });

      it('a heartbeat that skips recently seen workers writes only the stale ones', async () => {
        const fresh = unique('worker');
        const stale = unique('worker');
        await store.registerWorker({ id: stale, slots: 1, nodeId: 'n1' });
        await h.advanceMs(PAST_TTL_MS);
        await store.registerWorker({ id: fresh, slots: 1, nodeId: 'n1' });
        const before = new Map((await store.listWorkers(LONG_TTL_MS)).map((w) => [w.id, w]));
        await store.heartbeatWorkers([fresh, stale, unique('never-registered')], 'n2', SHORT_TTL_MS);
        const after = new Map((await store.listWorkers(LONG_TTL_MS)).map((w) => [w.id, w]));
        // The fresh row is untouched, node included; the stale one is seen now, by n2.
        expect(after.get(fresh)).toEqual(before.get(fresh));
        expect(after.get(stale)!.nodeId).toBe('n2');
        expect(after.get(stale)!.lastSeen.getTime()).toBeGreaterThan(before.get(stale)!.lastSeen.getTime());
        expect((await store.listWorkers(SHORT_TTL_MS)).map((w) => w.id).filter((id) => id === fresh || id === stale).sort()).toEqual([fresh, stale].sort());
      });

      it('appends events and reads them back in order', async () => {
        const type = unique('test:event');
        await store.appendEvents([
          { type, shard: 3, dagId: 'd', runId: '7', jobId: '8', workerId: 'w', nodeId: 'n', fence: 5, epoch: 2, data: { n: 1 } },
          { type, data: { n: 2 } },
        ]);
        const events = await store.listEvents({ type });
        expect(events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
        expect(events[0]).toMatchObject({ shard: 3, dagId: 'd', runId: '7', jobId: '8', workerId: 'w', nodeId: 'n', fence: 5, epoch: 2 });
        expect(events[0]!.at).toBeInstanceOf(Date);
        expect(await store.listEvents({ type, afterId: events[0]!.id })).toEqual([events[1]]);
        expect((await store.listEvents({ runId: '7', type })).map((e) => e.data)).toEqual([{ n: 1 }]);
      });
    });
  });
}

/** Waits (in real time) for something delivered asynchronously, such as a notice. */
async function eventually(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
