import { describe, expect, it } from 'vitest';
import type { FencelineError } from '../../errors';
import type { JobRow, RunRow } from '../../model';
import { LIMITS } from '../../limits';
import type { LeaderToken } from '../../store';
import type { ContractContext } from './context';
import { DUE_STEP_MS, newJobs, refusedWith, SHARD_COUNT, spec } from './fixtures';
import { completeJob, createScheduledRunsMany, finishRun, finishRuns, markUpstreamFailed, promoteJobs, startRun, startRuns } from './one-leader';
import { parseWorkerId } from '../../ids';

/** The store contract's part on runs: starts, promotions and finishes, for one leader and for several in one call. */
export function runsContract(c: ContractContext): void {
  describe('runs', () => {
    it('starts a queued run once and walks its jobs and the run to the end', async () => {
      const { token, run, ready, waiting } = await c.startedRun();
      expect(await c.store.getRun(run.id)).toMatchObject({ state: 'running' });
      expect((await c.store.getRun(run.id)).startedAt).toBeInstanceOf(Date);
      expect(await startRun(c.store, token, run.id, newJobs())).toEqual([]);
      expect(ready).toMatchObject({ state: 'ready', fence: 0, attempt: 0, runId: run.id, shard: token.shard });
      expect(ready.readyAt).toBeInstanceOf(Date);
      expect(waiting).toMatchObject({ state: 'waiting', readyAt: null });

      const snapshot = await c.store.loadShard(token);
      expect(snapshot.runs.map((r) => r.id)).toContain(run.id);
      expect(snapshot.jobs.filter((j) => j.runId === run.id)).toHaveLength(2);

      const lease = await c.grantOne(token, ready.id, 'w1');
      await completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { output: null });
      expect(await promoteJobs(c.store, token, [waiting.id])).toEqual([waiting.id]);
      expect(await promoteJobs(c.store, token, [waiting.id])).toEqual([]);
      expect(await markUpstreamFailed(c.store, token, [waiting.id])).toEqual([waiting.id]);
      expect((await c.store.getJob(waiting.id)).state).toBe('upstream_failed');
      expect(await finishRun(c.store, token, run.id, 'failed')).toBe(true);
      expect(await finishRun(c.store, token, run.id, 'succeeded')).toBe(false);
      expect(await c.store.getRun(run.id)).toMatchObject({ state: 'failed' });
      expect((await c.store.listJobs(run.id)).map((j) => j.state)).toEqual(['succeeded', 'upstream_failed']);
      expect((await c.store.loadShard(token)).runs.map((r) => r.id)).not.toContain(run.id);
    });

    it('creates, starts and finishes the runs of many DAGs in one call each, deciding every item on its own', async () => {
      const { token, dagId } = await c.leadFreshShard();
      // More DAGs in the same shard: ids are searched until they land there.
      const ids = c.idsInShard(dagId, token.shard, 3, '-m');
      for (const id of ids) await c.store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const slots = await Promise.all(ids.map(async (id) => (await c.store.getDag(id)).nextRunAt!));
      await c.untilDue(slots.map((d) => d.getTime()));
      const items = ids.map((id, i) => ({ dagId: id, expectedNextRunAt: slots[i]!, slots: [slots[i]!], nextRunAt: new Date(slots[i]!.getTime() + DUE_STEP_MS) }));
      // The third item's expectation is wrong (its next_run_at is elsewhere), and the
      // first DAG is named twice: it is written once, for its first item.
      items[2] = { ...items[2]!, expectedNextRunAt: new Date(slots[2]!.getTime() - 1) };
      const created = await createScheduledRunsMany(c.store, token, [...items, items[0]!]);
      expect(created.map((list) => list.length)).toEqual([1, 1, 0, 0]);
      expect(created[0]![0]).toMatchObject({ dagId: ids[0], scheduledAt: slots[0], state: 'queued' });
      expect((await c.store.getDag(ids[2]!)).nextRunAt).toEqual(slots[2]);

      const [a, b] = [created[0]![0]!, created[1]![0]!];
      const started = await startRuns(c.store, token, [
        { runId: a.id, jobs: newJobs() },
        { runId: b.id, jobs: newJobs() },
        { runId: a.id, jobs: newJobs() },
      ]);
      expect(started.map((jobs) => jobs.map((j) => j.taskId).sort())).toEqual([['a', 'b'], ['a', 'b'], []]);
      expect(started[1]!.every((j) => j.runId === b.id)).toBe(true);
      expect((await c.store.listJobs(a.id)).length).toBe(2);

      // A run finishes only once none of its jobs is open.
      await markUpstreamFailed(
        c.store,
        token,
        [...started[0]!, ...started[1]!].map((j) => j.id),
      );
      const finished = await finishRuns(c.store, token, [
        { runId: a.id, state: 'succeeded' },
        { runId: b.id, state: 'failed' },
        { runId: a.id, state: 'failed' },
      ]);
      expect(finished).toEqual([true, true, false]);
      expect((await c.store.getRun(a.id)).state).toBe('succeeded');
      expect((await c.store.getRun(b.id)).state).toBe('failed');
      expect(await finishRuns(c.store, token, [{ runId: a.id, state: 'failed' }])).toEqual([false]);
      // A deposed leader's batches write nothing.
      await c.store.releaseShard(token);
      await refusedWith(createScheduledRunsMany(c.store, token, [items[2]!]), 'DEPOSED_LEADER');
      await refusedWith(finishRuns(c.store, token, [{ runId: a.id, state: 'failed' }]), 'DEPOSED_LEADER');
    });

    it('writes for several leaders in one call, each group under its own token and in its own shard', async () => {
      // Fresh shards (and fresh DAGs) per leader; the third leader is deposed before the calls.
      const leaders = [await c.leadFreshShard(), await c.leadFreshShard(), await c.leadFreshShard()];
      for (const l of leaders) await c.store.putDag(spec(l.dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const slots = await Promise.all(leaders.map(async (l) => (await c.store.getDag(l.dagId)).nextRunAt!));
      await c.untilDue(slots.map((d) => d.getTime()));
      const item = (i: number) => ({ dagId: leaders[i]!.dagId, expectedNextRunAt: slots[i]!, slots: [slots[i]!], nextRunAt: new Date(slots[i]!.getTime() + DUE_STEP_MS) });
      await c.store.releaseShard(leaders[2]!.token);
      const [one, two, three] = leaders.map((l) => l.token) as [LeaderToken, LeaderToken, LeaderToken];

      // The second DAG is named first through the wrong token (it lies in another
      // shard), so nothing is written for it: a DAG named twice counts its first item.
      const created = await c.store.createScheduledRunsAcross([
        { token: one, items: [item(0), item(1)] },
        { token: two, items: [item(1)] },
        { token: three, items: [item(2)] },
      ]);
      expect((created[0] as RunRow[][]).map((l) => l.length)).toEqual([1, 0]);
      expect((created[1] as RunRow[][]).map((l) => l.length)).toEqual([0]);
      expect((created[2] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getDag(leaders[1]!.dagId)).nextRunAt).toEqual(slots[1]);
      expect((await c.store.getDag(leaders[2]!.dagId)).nextRunAt).toEqual(slots[2]);
      const second = (await c.store.createScheduledRunsAcross([{ token: two, items: [item(1)] }]))[0] as RunRow[][];
      const [runA, runB] = [(created[0] as RunRow[][])[0]![0]!, second[0]![0]!];

      const started = await c.store.startRunsAcross([
        {
          token: one,
          items: [
            { runId: runA.id, jobs: newJobs() },
            { runId: runB.id, jobs: newJobs() },
          ],
        },
        { token: two, items: [{ runId: runB.id, jobs: newJobs() }] },
        { token: three, items: [] },
      ]);
      expect((started[0] as JobRow[][]).map((l) => l.length)).toEqual([2, 0]);
      expect((started[1] as JobRow[][]).map((l) => l.length)).toEqual([0]);
      expect((started[2] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getRun(runB.id)).state).toBe('queued');
      const jobsB = ((await c.store.startRunsAcross([{ token: two, items: [{ runId: runB.id, jobs: newJobs() }] }]))[0] as JobRow[][])[0]!;
      const waitingA = (started[0] as JobRow[][])[0]!.find((j) => j.taskId === 'b')!;
      const waitingB = jobsB.find((j) => j.taskId === 'b')!;

      const promoted = await c.store.promoteJobsAcross([
        { token: one, items: [waitingA.id, waitingB.id] },
        { token: three, items: [waitingB.id] },
      ]);
      expect(promoted[0]).toEqual([waitingA.id]);
      expect((promoted[1] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getJob(waitingB.id)).state).toBe('waiting');
      const skipped = await c.store.markUpstreamFailedAcross([{ token: two, items: [waitingB.id, waitingA.id] }]);
      expect(skipped).toEqual([[waitingB.id]]);
      // A run finishes only once none of its jobs is open.
      await markUpstreamFailed(
        c.store,
        one,
        (started[0] as JobRow[][])[0]!.map((j) => j.id),
      );
      await markUpstreamFailed(c.store, two, [jobsB.find((j) => j.taskId === 'a')!.id]);

      const finished = await c.store.finishRunsAcross([
        {
          token: one,
          items: [
            { runId: runA.id, state: 'succeeded' },
            { runId: runB.id, state: 'failed' },
          ],
        },
        {
          token: two,
          items: [
            { runId: runB.id, state: 'failed' },
            { runId: runB.id, state: 'succeeded' },
          ],
        },
        { token: three, items: [{ runId: runA.id, state: 'failed' }] },
      ]);
      // The second run's first item went through the wrong token, so neither moves it.
      expect(finished.slice(0, 2)).toEqual([
        [true, false],
        [false, false],
      ]);
      expect((finished[2] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getRun(runA.id)).state).toBe('succeeded');
      expect((await c.store.getRun(runB.id)).state).toBe('running');
      expect(await c.store.finishRunsAcross([{ token: two, items: [{ runId: runB.id, state: 'failed' }] }])).toEqual([[true]]);
      expect((await c.store.getRun(runB.id)).state).toBe('failed');
      expect(await c.store.finishRunsAcross([])).toEqual([]);
    });

    it('refuses to start a run with more jobs than a run may hold, and fails such a run from the queue', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const [big, small] = [await c.store.triggerRun(dagId), await c.store.triggerRun(dagId)];
      const template = newJobs()[0]!;
      const tooMany = Array.from({ length: LIMITS.maxTasksPerDag + 1 }, (_, k) => ({ ...template, taskId: `t${k}` }));
      // Refused as a whole, before anything is written: the run beside it stays queued too.
      const refused = await refusedWith(
        startRuns(c.store, token, [
          { runId: small.id, jobs: newJobs() },
          { runId: big.id, jobs: tooMany },
        ]),
        'INVALID_INPUT',
      );
      expect(refused.message).toContain(`at most ${LIMITS.maxTasksPerDag} jobs`);
      await refusedWith(c.store.startRunsAcross([{ token, items: [{ runId: big.id, jobs: tooMany }] }]), 'INVALID_INPUT');
      expect((await c.store.getRun(small.id)).state).toBe('queued');
      expect((await c.store.getRun(big.id)).state).toBe('queued');

      // A queued run may fail (it can never start), but not succeed.
      expect(await finishRuns(c.store, token, [{ runId: big.id, state: 'succeeded' }])).toEqual([false]);
      expect(await finishRuns(c.store, token, [{ runId: big.id, state: 'failed' }])).toEqual([true]);
      expect(await c.store.getRun(big.id)).toMatchObject({ state: 'failed', startedAt: null });
      expect((await c.store.getRun(big.id)).endedAt).toBeInstanceOf(Date);
      expect(await finishRuns(c.store, token, [{ runId: big.id, state: 'failed' }])).toEqual([false]);
      expect((await startRuns(c.store, token, [{ runId: small.id, jobs: newJobs() }]))[0]).toHaveLength(2);

      // A tick's write that would start such a run is refused whole, too, writing nothing.
      const { token: scheduledToken, dagId: scheduled } = await c.leadFreshShard();
      await c.store.putDag(spec(scheduled, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const slot = (await c.store.getDag(scheduled)).nextRunAt!;
      await c.untilDue([slot.getTime()]);
      const item = { dagId: scheduled, expectedNextRunAt: slot, slots: [slot], nextRunAt: new Date(slot.getTime() + DUE_STEP_MS), start: { version: 1, jobs: tooMany } };
      await refusedWith(createScheduledRunsMany(c.store, scheduledToken, [item]), 'INVALID_INPUT');
      expect((await c.store.getDag(scheduled)).nextRunAt).toEqual(slot);
      expect(await c.store.listRuns({ dagId: scheduled, limit: 10 })).toEqual([]);
    });
  });
}
