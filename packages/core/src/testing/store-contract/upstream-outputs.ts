import { describe, expect, it } from 'vitest';
import { parseWorkerId } from '../../ids';
import { LIMITS } from '../../limits';
import type { LeaseRef } from '../../store';
import type { ContractContext } from './context';
import { newJobs, refusedWith, SHARD_COUNT, spec } from './fixtures';
import { completeJob, promoteJobs, startRun } from './one-leader';

/** The store contract's part on upstream outputs: a fenced read of the accepted results, and the size limits that keep them small. */
export function upstreamOutputsContract(c: ContractContext): void {
  describe('upstream outputs', () => {
    /** A run whose job `a` succeeded with `output`, and whose job `b` is leased to w2. */
    async function downstreamLeased(output: unknown) {
      const { token, run, ready, waiting } = await c.startedRun();
      const upstream = await c.grantOne(token, ready.id, 'w1');
      await completeJob(c.store, { jobId: ready.id, fence: upstream.fence, workerId: parseWorkerId('w1'), session: null }, { output, logs: 'a ran' });
      expect(await promoteJobs(c.store, token, [waiting.id])).toEqual([waiting.id]);
      const lease = await c.grantOne(token, waiting.id, 'w2');
      const ref: LeaseRef = { jobId: waiting.id, fence: lease.fence, workerId: parseWorkerId('w2'), session: null };
      return { token, run, upstreamJob: ready, upstreamFence: upstream.fence, ref };
    }

    it('hands the holder of the current lease the accepted output of each succeeded upstream task of its run', async () => {
      const { upstreamJob, upstreamFence, ref } = await downstreamLeased({ rows: 3, files: ['x.csv'] });
      expect(await c.store.upstreamOutputs(ref, ['a'])).toEqual([{ taskId: 'a', jobId: upstreamJob.id, fence: upstreamFence, output: { rows: 3, files: ['x.csv'] } }]);
      // A task that has not succeeded (b itself) or is not in the run is left out.
      expect((await c.store.upstreamOutputs(ref, ['missing', 'b', 'a', 'a'])).map((o) => o.taskId)).toEqual(['a']);
      expect(await c.store.upstreamOutputs(ref, [])).toEqual([]);
    });

    it('hands a job only the outputs of the tasks its task depends on, whatever else of its run it names', async () => {
      const { token, dagId } = await c.leadFreshShard();
      // a and c run first; b depends on a only.
      const tasks = [
        { id: 'a', type: 'noop' },
        { id: 'c', type: 'noop' },
        { id: 'b', type: 'noop', dependsOn: ['a'] },
      ];
      await c.store.putDag(spec(dagId, { tasks }), SHARD_COUNT);
      const run = await c.store.triggerRun(dagId);
      const [a, b] = newJobs();
      const jobs = await startRun(c.store, token, run.id, [a!, { ...a!, taskId: 'c' }, b!]);
      const byTask = (t: string) => jobs.find((j) => j.taskId === t)!;
      for (const t of ['a', 'c']) {
        const lease = await c.grantOne(token, byTask(t).id, 'w1');
        await completeJob(c.store, { jobId: byTask(t).id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { output: { from: t } });
      }
      expect(await promoteJobs(c.store, token, [byTask('b').id])).toEqual([byTask('b').id]);
      const lease = await c.grantOne(token, byTask('b').id, 'w2');
      const ref: LeaseRef = { jobId: byTask('b').id, fence: lease.fence, workerId: parseWorkerId('w2'), session: null };
      expect((await c.store.upstreamOutputs(ref, ['a', 'c'])).map((o) => o.output)).toEqual([{ from: 'a' }]);
      expect(await c.store.upstreamOutputs(ref, ['c'])).toEqual([]);
    });

    it('refuses a read whose fence is not the current one, or by another worker, and reads nothing', async () => {
      const { ref } = await downstreamLeased({ n: 1 });
      await refusedWith(c.store.upstreamOutputs({ ...ref, fence: ref.fence - 1 }, ['a']), 'STALE_FENCE');
      await refusedWith(c.store.upstreamOutputs({ ...ref, fence: ref.fence + 1 }, ['a']), 'FORGED_FENCE');
      await refusedWith(c.store.upstreamOutputs({ ...ref, workerId: parseWorkerId('w9') }, ['a']), 'LEASE_LOST');
      await completeJob(c.store, ref, { output: null });
      // Once the job's own result is written its lease is over: nothing more is handed out.
      await refusedWith(c.store.upstreamOutputs(ref, ['a']), 'LEASE_LOST');
    });

    it('refuses an output over LIMITS.maxOutputBytes at completion, saying what the limit is for, and writes nothing', async () => {
      const { token, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      const ref: LeaseRef = { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null };
      // Under the result limit, over the output limit.
      const err = await refusedWith(completeJob(c.store, ref, { output: 'x'.repeat(LIMITS.maxOutputBytes + 1) }), 'TOO_LARGE');
      expect(err.message).toBe(
        `the output of job ${ready.id} is ${LIMITS.maxOutputBytes + 3} bytes of JSON; an output may be at most ${LIMITS.maxOutputBytes} bytes (LIMITS.maxOutputBytes), since it is handed to every downstream task. Return less, or store the data elsewhere and return a reference to it.`,
      );
      expect(err.details).toMatchObject({ field: 'output', limitBytes: LIMITS.maxOutputBytes });
      expect(await c.store.getResult(ready.id)).toBeNull();
      expect((await c.store.getJob(ready.id)).state).toBe('leased');
    });

    it('refuses an upstream read that names more tasks than a task may depend on, or a name that is not a task id', async () => {
      const { ref } = await downstreamLeased(1);
      await refusedWith(
        c.store.upstreamOutputs(
          ref,
          Array.from({ length: LIMITS.maxDependenciesPerTask + 1 }, (_, i) => `t${i}`),
        ),
        'INVALID_INPUT',
      );
      // Text the store cannot keep is refused before it reaches a statement.
      for (const bad of ['nul\u0000', 'lone\ud800', '', 'has space']) {
        const err = await refusedWith(c.store.upstreamOutputs(ref, ['a', bad]), 'INVALID_INPUT');
        expect(err.details).toEqual({ field: 'taskIds.1' });
      }
    });
  });
}
