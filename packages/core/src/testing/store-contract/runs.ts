import { describe, expect, it } from 'vitest';
import type { FencelineError } from '../../errors';
import type { JobRow, RunRow } from '../../model';
import { LIMITS } from '../../limits';
import type { CreatedRun, DuePageKey, LeaderToken, StoreNotice } from '../../store';
import type { ContractContext } from './context';
import { DUE_STEP_MS, eventually, LONG_TTL_MS, newJobs, refusedWith, SHARD_COUNT, spec, unique } from './fixtures';
import { completeJob, createScheduledRuns, createScheduledRunsMany, finishRun, finishRuns, grantLeases, markUpstreamFailed, promoteJobs, startRun, startRuns } from './one-leader';

/** The store contract's part on ticks and runs: due reads, run creation on slots, starts, promotions and finishes. */
export function runsContract(c: ContractContext): void {
  describe('ticks and runs', () => {
    /**
     * A DAG whose first slot, and the next_run_at values the tests move it to after it,
     * are due: runs are never created before their slot (store time).
     */
    async function intervalDag() {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const dag = await c.store.getDag(dagId);
      expect(dag.nextRunAt).toBeInstanceOf(Date);
      await c.untilDue([dag.nextRunAt!.getTime() + 2 * DUE_STEP_MS]);
      return { token, dagId, slot: dag.nextRunAt! };
    }

    it('creates a run already started when asked: its jobs in the same write, only at the expected version and for one slot', async () => {
      const { token, dagId } = await c.leadFreshShard();
      const ids = c.idsInShard(dagId, token.shard, 4, '-s');
      for (const id of ids) await c.store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const slots = await Promise.all(ids.map(async (id) => (await c.store.getDag(id)).nextRunAt!));
      await c.untilDue(slots.map((d) => d.getTime() + DUE_STEP_MS));
      const start = { version: 1, jobs: newJobs() };
      const item = (i: number) => ({ dagId: ids[i]!, expectedNextRunAt: slots[i]!, slots: [slots[i]!], nextRunAt: new Date(slots[i]!.getTime() + 2 * DUE_STEP_MS) });
      const created = await c.store.createScheduledRunsAcross([
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
      expect((await c.store.listJobs(started![0]!.id)).map((j) => j.id).sort()).toEqual(started![0]!.jobs!.map((j) => j.id).sort());
      expect(await c.store.getRun(started![0]!.id)).toMatchObject({ state: 'running' });
      for (const list of [wrongVersion!, plain!]) {
        expect(list.map((r) => [r.state, r.jobs])).toEqual([['queued', undefined]]);
        expect(await c.store.listJobs(list[0]!.id)).toEqual([]);
      }
      expect(twoSlots!.map((r) => r.state)).toEqual(['queued', 'queued']);
      // The started run's jobs lease like any other.
      const ready = started![0]!.jobs!.find((j) => j.taskId === 'a')!;
      expect((await grantLeases(c.store, token, [{ jobId: ready.id, workerId: 'w1' }], LONG_TTL_MS)).map((g) => g.jobId)).toEqual([ready.id]);
    });

    it('creates no run before its slot: a DAG not yet due is left as it is', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 60_000 } }), SHARD_COUNT);
      const slot = (await c.store.getDag(dagId)).nextRunAt!;
      const next = new Date(slot.getTime() + 60_000);
      expect(await createScheduledRuns(c.store, token, dagId, slot, [slot], next)).toEqual([]);
      expect(await c.store.createScheduledRunsAcross([{ token, items: [{ dagId, expectedNextRunAt: slot, slots: [slot], nextRunAt: next }] }])).toEqual([[[]]]);
      expect((await c.store.getDag(dagId)).nextRunAt).toEqual(slot);
      expect(await c.store.listRuns({ dagId })).toEqual([]);
    });

    it('dueDags with a horizon also returns the DAGs due within it, and only those, leaving out skipped slots', async () => {
      const { token, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'ahead');
      const [, near, far] = c.idsInShard(dagId, token.shard, 3, 'n') as [string, string, string];
      // Anchored on store time, so the near DAG is due in about 30 s and the far one in
      // about an hour whatever the time of day.
      const nowMs = (await c.store.now()).getTime();
      const anchored = (aheadMs: number) => ({ kind: 'interval' as const, everyMs: 86_400_000, anchor: new Date(nowMs + aheadMs).toISOString() });
      await c.store.putDag(spec(near, { schedule: anchored(30_000) }), SHARD_COUNT);
      await c.store.putDag(spec(far, { schedule: anchored(3_600_000) }), SHARD_COUNT);
      expect((await c.store.dueDags([token], 100)).dags).toEqual([]);
      const ahead = await c.store.dueDags([token], 100, undefined, { horizonMs: 120_000 });
      expect(ahead.dags.map((d) => d.id)).toEqual([near]);
      expect(ahead.dags[0]!.nextRunAt.getTime()).toBeGreaterThan(ahead.now.getTime());
      const all = await c.store.dueDags([token], 100, undefined, { horizonMs: 2 * 3_600_000 });
      expect(all.dags.map((d) => d.id)).toEqual([near, far]);
      // A slot the leader holds already is left out of the read; the others are not.
      const nearSlot = all.dags[0]!.nextRunAt;
      const skipping = await c.store.dueDags([token], 100, undefined, { horizonMs: 2 * 3_600_000, skipSlots: [nearSlot, new Date(nearSlot.getTime() + 1)] });
      expect(skipping.dags.map((d) => d.id)).toEqual([far]);
      await refusedWith(c.store.dueDags([token], 100, undefined, { skipSlots: Array.from({ length: LIMITS.maxSkippedSlots + 1 }, (_, i) => new Date(i)) }), 'INVALID_INPUT');
    });

    it('a tick run twice creates one run per (dag, scheduled_at)', async () => {
      const { token, dagId, slot } = await intervalDag();
      const next = new Date(slot.getTime() + DUE_STEP_MS);
      const created = await createScheduledRuns(c.store, token, dagId, slot, [slot], next);
      expect(created).toEqual([expect.objectContaining({ dagId, scheduledAt: slot, trigger: 'schedule', state: 'queued', dagVersion: 1 })]);
      // The same tick again: next_run_at has moved, so the compare-and-set writes nothing.
      expect(await createScheduledRuns(c.store, token, dagId, slot, [slot], next)).toEqual([]);
      // A later tick whose catch-up overlaps an existing slot creates only the new one.
      const after = new Date(next.getTime() + DUE_STEP_MS);
      const second = await createScheduledRuns(c.store, token, dagId, next, [slot, next], after);
      expect(second.map((r) => r.scheduledAt)).toEqual([next]);
      expect((await c.store.getDag(dagId)).nextRunAt).toEqual(after);
      const runs = await c.store.listRuns({ dagId });
      expect(runs.map((r) => r.scheduledAt.getTime()).sort()).toEqual([slot.getTime(), next.getTime()]);
      expect((await c.store.queuedRuns(token)).map((r) => r.id).sort()).toEqual(runs.map((r) => r.id).sort());
    });

    it('two leaders racing create one run per (dag, scheduled_at)', async () => {
      const { token, dagId, slot } = await intervalDag();
      const next = new Date(slot.getTime() + DUE_STEP_MS);
      // Two ticks of one leader in flight at once.
      const racing = await Promise.all([
        createScheduledRuns(c.store, token, dagId, slot, [slot], next),
        createScheduledRuns(c.store, token, dagId, slot, [slot], next),
      ]);
      expect(racing.flat()).toHaveLength(1);
      // A failover: the new leader's first tick re-covers the slot the old one already ran.
      await c.store.releaseShard(token);
      const successor = await c.store.acquireShard(token.shard, unique('node'), LONG_TTL_MS);
      const after = new Date(next.getTime() + DUE_STEP_MS);
      const both = await Promise.allSettled([
        createScheduledRuns(c.store, token, dagId, next, [slot, next], after),
        createScheduledRuns(c.store, successor!.token, dagId, next, [slot, next], after),
      ]);
      expect(both[0].status).toBe('rejected');
      expect(both[1].status === 'fulfilled' && both[1].value.map((r) => r.scheduledAt)).toEqual([next]);
      const slots = (await c.store.listRuns({ dagId })).map((r) => r.scheduledAt.getTime());
      expect(slots.sort()).toEqual([slot.getTime(), next.getTime()]);
    });

    it('dueDags returns the due, unpaused DAGs of the shards the tokens lead', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const other = await c.leadFreshShard();
      await c.store.putDag(spec(other.dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      await c.h.advanceMs(1_100);
      const due = await c.store.dueDags([token], 100);
      expect(due.dags.map((d) => d.id)).toEqual([dagId]);
      expect(due.dags[0]).toMatchObject({ shard: token.shard, version: 1 });
      expect(due.dags[0]!.spec.id).toBe(dagId);
      expect(due.dags[0]!.nextRunAt.getTime()).toBeLessThanOrEqual(due.now.getTime());
      // A token that no longer leads contributes nothing.
      await c.store.releaseShard(other.token);
      expect((await c.store.dueDags([token, other.token], 100)).dags.map((d) => d.id)).toEqual([dagId]);
      await c.store.setPaused(dagId, true);
      expect((await c.store.dueDags([token], 100)).dags).toEqual([]);
    });

    it('dueDags pages by (next_run_at, id): the pages together are the whole list, in order, each DAG once', async () => {
      const { token, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'page');
      const ids = c.idsInShard(dagId, token.shard, 5, 'x');
      // Two periods, so the order mixes next_run_at and id ties.
      for (const [i, id] of ids.entries()) await c.store.putDag(spec(id, { schedule: { kind: 'interval', everyMs: i % 2 === 0 ? 1_000 : 1_500 } }), SHARD_COUNT);
      await c.h.advanceMs(1_600);
      const whole = (await c.store.dueDags([token], 100)).dags;
      expect(whole.map((d) => d.id).sort()).toEqual([...ids].sort());
      const paged: string[] = [];
      let after: DuePageKey | undefined;
      for (let page = 0; page < 10; page++) {
        const { dags } = await c.store.dueDags([token], 2, after);
        paged.push(...dags.map((d) => d.id));
        if (dags.length < 2) break;
        after = { nextRunAt: dags[1]!.nextRunAt, id: dags[1]!.id };
      }
      expect(paged).toEqual(whole.map((d) => d.id));
      for (let i = 1; i < whole.length; i++) expect(whole[i]!.nextRunAt.getTime()).toBeGreaterThanOrEqual(whole[i - 1]!.nextRunAt.getTime());
    });

    it('reads many DAG versions at once, leaving out the ones that do not exist', async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      await c.store.putDag(spec(dagId, { tasks: [{ id: 'only', type: 'noop' }] }), SHARD_COUNT);
      const rows = await c.store.getDagVersions([
        { dagId, version: 2 },
        { dagId, version: 7 },
        { dagId: `${dagId}-missing`, version: 1 },
        { dagId, version: 1 },
      ]);
      expect(rows.map((r) => `${r.dagId}@${r.version}`).sort()).toEqual([`${dagId}@1`, `${dagId}@2`]);
      expect(rows.find((r) => r.version === 2)!.spec.tasks.map((t) => t.id)).toEqual(['only']);
      expect(await c.store.getDagVersions([])).toEqual([]);
    });

    it('runs pin the version they were created under', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const first = await c.store.triggerRun(dagId);
      const changed = await c.store.putDag(spec(dagId, { tasks: [{ id: 'a', type: 'noop' }, { id: 'c', type: 'noop' }] }), SHARD_COUNT);
      expect(changed).toEqual({ dagId, version: 2, created: true });
      const second = await c.store.triggerRun(dagId);
      expect(first.dagVersion).toBe(1);
      expect(second.dagVersion).toBe(2);
      expect((await c.store.getRun(first.id)).dagVersion).toBe(1);
      const snapshot = await c.store.loadShard(token);
      expect(snapshot.versions.get(`${dagId}@1`)?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      expect(snapshot.versions.get(`${dagId}@2`)?.tasks.map((t) => t.id)).toEqual(['a', 'c']);
    });

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
      await completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: 'w1' }, { output: null });
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
        { token: one, items: [{ runId: runA.id, jobs: newJobs() }, { runId: runB.id, jobs: newJobs() }] },
        { token: two, items: [{ runId: runB.id, jobs: newJobs() }] },
        { token: three, items: [] },
      ]);
      expect((started[0] as JobRow[][]).map((l) => l.length)).toEqual([2, 0]);
      expect((started[1] as JobRow[][]).map((l) => l.length)).toEqual([0]);
      expect((started[2] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getRun(runB.id)).state).toBe('queued');
      const jobsB = (((await c.store.startRunsAcross([{ token: two, items: [{ runId: runB.id, jobs: newJobs() }] }]))[0]) as JobRow[][])[0]!;
      const waitingA = (started[0] as JobRow[][])[0]!.find((j) => j.taskId === 'b')!;
      const waitingB = jobsB.find((j) => j.taskId === 'b')!;

      const promoted = await c.store.promoteJobsAcross([
        { token: one, items: [waitingA.id, waitingB.id] },
        { token: three, items: [waitingB.id] },
      ]);
      expect(promoted[0]).toEqual([waitingA.id]);
      expect((promoted[1] as FencelineError).code).toBe('DEPOSED_LEADER');
      expect((await c.store.getJob(waitingB.id)).state).toBe('waiting');
      const skipped = await c.store.markUpstreamFailedAcross([
        { token: two, items: [waitingB.id, waitingA.id] },
      ]);
      expect(skipped).toEqual([[waitingB.id]]);

      const finished = await c.store.finishRunsAcross([
        { token: one, items: [{ runId: runA.id, state: 'succeeded' }, { runId: runB.id, state: 'failed' }] },
        { token: two, items: [{ runId: runB.id, state: 'failed' }, { runId: runB.id, state: 'succeeded' }] },
        { token: three, items: [{ runId: runA.id, state: 'failed' }] },
      ]);
      // The second run's first item went through the wrong token, so neither moves it.
      expect(finished.slice(0, 2)).toEqual([[true, false], [false, false]]);
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
      const refused = await refusedWith(startRuns(c.store, token, [{ runId: small.id, jobs: newJobs() }, { runId: big.id, jobs: tooMany }]), 'INVALID_INPUT');
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

    it('triggerRun queues a manual run and notifies subscribers', async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const seen: StoreNotice[] = [];
      const unsubscribe = await c.store.subscribe((n) => seen.push(n));
      try {
        const run = await c.store.triggerRun(dagId);
        expect(run).toMatchObject({ dagId, trigger: 'manual', state: 'queued', dagVersion: 1 });
        await eventually(() => seen.some((n) => n.kind === 'run-queued' && n.runId === run.id));
        await c.store.notify({ kind: 'job-ended', shard: 1, jobId: '42' });
        await eventually(() => seen.some((n) => n.kind === 'job-ended' && n.jobId === '42'));
        // A notice of several jobs arrives with its whole list.
        await c.store.notify({ kind: 'job-ended', shard: 1, jobId: '43', jobIds: ['43', '44', '45'] });
        await eventually(() => seen.some((n) => n.kind === 'job-ended' && n.jobId === '43'));
        expect(seen.find((n) => n.kind === 'job-ended' && n.jobId === '43')).toEqual({ kind: 'job-ended', shard: 1, jobId: '43', jobIds: ['43', '44', '45'] });
      } finally {
        await unsubscribe();
      }
      await refusedWith(c.store.triggerRun(unique('missing')), 'NOT_FOUND');
    });

    it('triggerRun with a request key queues one run per key and DAG, even when sent twice at once', async () => {
      const { dagId } = await c.leadFreshShard();
      const other = unique('keyed-other');
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      await c.store.putDag(spec(other), SHARD_COUNT);
      const [first, again] = await Promise.all([c.store.triggerRun(dagId, { requestKey: 'click-1' }), c.store.triggerRun(dagId, { requestKey: 'click-1' })]);
      expect(again.id).toBe(first.id);
      expect((await c.store.triggerRun(dagId, { requestKey: 'click-1' })).id).toBe(first.id);
      // Another key, no key, or the same key on another DAG each queue a run of their own.
      const second = await c.store.triggerRun(dagId, { requestKey: 'click-2' });
      const keyless = await c.store.triggerRun(dagId);
      const elsewhere = await c.store.triggerRun(other, { requestKey: 'click-1' });
      expect(new Set([first.id, second.id, keyless.id, elsewhere.id]).size).toBe(4);
      expect((await c.store.listRuns({ dagId, limit: 10 })).map((r) => r.id).sort()).toEqual([first.id, second.id, keyless.id].sort());
    });

    it('triggerRun refuses a malformed request key, naming the field, and queues nothing', async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      for (const requestKey of ['', 'has space', 'x'.repeat(LIMITS.maxRequestKeyLength + 1), "'; drop table runs; --"]) {
        const err = await refusedWith(c.store.triggerRun(dagId, { requestKey }), 'INVALID_INPUT');
        expect(err.message).toContain('requestKey');
      }
      expect(await c.store.listRuns({ dagId, limit: 10 })).toEqual([]);
    });
  });
}
