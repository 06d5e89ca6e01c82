import { describe, expect, it } from 'vitest';
import { parseWorkerId, type JobId } from '../../ids';
import type { NewJob } from '../../store';
import type { ContractContext } from './context';
import { LONG_TTL_MS, PAST_TTL_MS, refusedWith, SHARD_COUNT, SHORT_TTL_MS, spec, unique } from './fixtures';
import { completeJob, grantLeases, startRun } from './one-leader';

/** Ready jobs `t0..t{n-1}`, each holding `units` of limit `name` while leased. */
function limitedJobs(n: number, name: string, units = 1): NewJob[] {
  return Array.from({ length: n }, (_, i) => ({
    taskId: `t${i}`,
    state: 'ready',
    maxAttempts: 3,
    priority: 0,
    retryBackoffMs: 0,
    retryBackoffMaxMs: 0,
    timeoutMs: 60_000,
    resources: { [name]: units },
  }));
}

/** The store contract's part on resource limits: setting them, refusing specs that could never fit, and grants that hold units only while their lease lives. */
export function resourcesContract(c: ContractContext): void {
  describe('resource limits', () => {
    const limitOf = async (name: string) => (await c.store.listResourceLimits()).find((l) => l.name === name);

    it('sets, changes, lists and deletes a limit, and refuses a bad name or a capacity below 1 without storing it', async () => {
      const name = unique('wh');
      expect(await c.store.setResourceLimit({ name, capacity: 10 })).toMatchObject({ name, capacity: 10, used: 0, waiting: 0 });
      expect(await c.store.setResourceLimit({ name, capacity: 4 })).toMatchObject({ name, capacity: 4 });
      const zero = await refusedWith(c.store.setResourceLimit({ name, capacity: 0 }), 'INVALID_INPUT');
      expect(zero.details).toMatchObject({ field: 'capacity' });
      await refusedWith(c.store.setResourceLimit({ name, capacity: 2.5 }), 'INVALID_INPUT');
      const bad = await refusedWith(c.store.setResourceLimit({ name: 'Ware House', capacity: 3 }), 'INVALID_INPUT');
      expect(bad.details).toMatchObject({ field: 'name' });
      expect((await limitOf(name))?.capacity).toBe(4);
      expect((await c.store.listResourceLimits()).some((l) => l.name === 'Ware House')).toBe(false);
      expect(await c.store.deleteResourceLimit(name)).toBe(true);
      expect(await c.store.deleteResourceLimit(name)).toBe(false);
      expect(await limitOf(name)).toBeUndefined();
    });

    it('refuses at apply a task that consumes a limit that does not exist or more units than it has, storing nothing', async () => {
      const name = unique('wh');
      await c.store.setResourceLimit({ name, capacity: 2 });
      const id = unique('limited');
      const tooMany = await refusedWith(c.store.putDag({ id, tasks: [{ id: 'load', type: 'noop', resources: { [name]: 3 } }] }, SHARD_COUNT), 'INVALID_DAG');
      expect(tooMany.details.issues).toEqual([expect.objectContaining({ kind: 'resource-limit', path: `tasks.0.resources.${name}` })]);
      expect(tooMany.message).toContain('has only 2');
      const missing = await refusedWith(c.store.putDag({ id, tasks: [{ id: 'load', type: 'noop', resources: { 'no-such-limit': 1 } }] }, SHARD_COUNT), 'INVALID_DAG');
      expect(missing.message).toContain('does not exist');
      await refusedWith(c.store.getDag(id as never), 'NOT_FOUND');
      expect(await c.store.putDag({ id, tasks: [{ id: 'load', type: 'noop', resources: { [name]: 2 } }] }, SHARD_COUNT)).toMatchObject({ version: 1, created: true });
    });

    it('grants limited jobs only while their units fit, and only on the limited path', async () => {
      const name = unique('wh');
      await c.store.setResourceLimit({ name, capacity: 2 });
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const run = await c.store.triggerRun(dagId);
      const jobs = await startRun(c.store, token, run.id, limitedJobs(3, name));
      const grant = (jobId: JobId, worker: string, limited = true) => ({ jobId, workerId: parseWorkerId(worker), ...(limited ? { limited: true } : {}) });
      // A grant that does not say the job is limited never leases it.
      expect(await grantLeases(c.store, token, [grant(jobs[0]!.id, 'w0', false)], LONG_TTL_MS)).toEqual([]);
      // Three jobs of one unit against a capacity of two, in one batch: the first two are granted.
      const granted = await grantLeases(
        c.store,
        token,
        jobs.map((j, i) => grant(j.id, `w${i}`)),
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t0', 't1']);
      expect(await limitOf(name)).toMatchObject({ capacity: 2, used: 2, waiting: 1 });
      expect(await grantLeases(c.store, token, [grant(jobs[2]!.id, 'w2')], LONG_TTL_MS)).toEqual([]);
      // A result ends the lease, and its unit is free again.
      await completeJob(c.store, { jobId: granted[0]!.jobId, fence: granted[0]!.fence, workerId: parseWorkerId('w0'), session: null }, { output: null });
      expect(await limitOf(name)).toMatchObject({ used: 1, waiting: 1 });
      expect((await grantLeases(c.store, token, [grant(jobs[2]!.id, 'w2')], LONG_TTL_MS)).map((g) => g.taskId)).toEqual(['t2']);
      expect(await limitOf(name)).toMatchObject({ used: 2, waiting: 0 });
      expect((await c.store.resourceUse()).find((l) => l.name === name)).toEqual({ name, capacity: 2, used: 2 });
    });

    it('releases the units of an expired or handed-back lease, and counts a new lease under its new fence only', async () => {
      const name = unique('wh');
      await c.store.setResourceLimit({ name, capacity: 1 });
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const run = await c.store.triggerRun(dagId);
      const [job] = await startRun(c.store, token, run.id, limitedJobs(1, name));
      const first = (await grantLeases(c.store, token, [{ jobId: job!.id, workerId: parseWorkerId('w1'), limited: true }], SHORT_TTL_MS))[0]!;
      expect(await limitOf(name)).toMatchObject({ used: 1 });
      await c.h.advanceMs(PAST_TTL_MS);
      await c.store.sweepExpired(token, 100);
      expect(await limitOf(name)).toMatchObject({ used: 0, waiting: 1 });
      // The late holder's result is refused, and frees nothing that is not its own.
      const second = (await grantLeases(c.store, token, [{ jobId: job!.id, workerId: parseWorkerId('w2'), limited: true }], LONG_TTL_MS))[0]!;
      expect(second.fence).toBeGreaterThan(first.fence);
      await refusedWith(completeJob(c.store, { jobId: job!.id, fence: first.fence, workerId: parseWorkerId('w1'), session: null }, { output: 'late' }), 'STALE_FENCE');
      expect(await limitOf(name)).toMatchObject({ used: 1 });
      await c.store.releaseJob({ jobId: job!.id, fence: second.fence, workerId: parseWorkerId('w2'), session: null });
      expect(await limitOf(name)).toMatchObject({ used: 0, waiting: 1 });
    });

    it('never over-grants a limit when leaders of different shards grant at once', async () => {
      const name = unique('wh');
      await c.store.setResourceLimit({ name, capacity: 3 });
      const shards = await Promise.all(
        Array.from({ length: 4 }, async () => {
          const { token, dagId } = await c.leadFreshShard();
          await c.store.putDag(spec(dagId), SHARD_COUNT);
          const run = await c.store.triggerRun(dagId);
          return { token, jobs: await startRun(c.store, token, run.id, limitedJobs(2, name)) };
        }),
      );
      const answers = await Promise.all(
        shards.map(({ token, jobs }, s) =>
          grantLeases(
            c.store,
            token,
            jobs.map((j, i) => ({ jobId: j.id, workerId: parseWorkerId(`w${s}-${i}`), limited: true })),
            LONG_TTL_MS,
          ),
        ),
      );
      expect(answers.flat()).toHaveLength(3);
      expect(await limitOf(name)).toMatchObject({ used: 3, waiting: 5 });
    });
  });
}
