import { describe, expect, it } from 'vitest';
import type { DagId } from '../../ids';
import { LIMITS } from '../../limits';
import type { CreatedRun, DuePageKey } from '../../store';
import type { ContractContext } from './context';
import { DUE_STEP_MS, LONG_TTL_MS, newJobs, refusedWith, SHARD_COUNT, spec, unique } from './fixtures';
import { createScheduledRuns, grantLeases } from './one-leader';
import { parseWorkerId } from '../../ids';

/** The store contract's part on ticks: due reads, run creation on slots (one run per slot), and the versions runs pin. */
export function ticksContract(c: ContractContext): void {
  describe('ticks', () => {
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
      expect((await grantLeases(c.store, token, [{ jobId: ready.id, workerId: parseWorkerId('w1') }], LONG_TTL_MS)).map((g) => g.jobId)).toEqual([ready.id]);
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
      const [, near, far] = c.idsInShard(dagId, token.shard, 3, 'n') as [DagId, DagId, DagId];
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
      const racing = await Promise.all([createScheduledRuns(c.store, token, dagId, slot, [slot], next), createScheduledRuns(c.store, token, dagId, slot, [slot], next)]);
      expect(racing.flat()).toHaveLength(1);
      // A failover: the new leader's first tick re-covers the slot the old one already ran.
      await c.store.releaseShard(token);
      const successor = await c.store.acquireShard({ shard: token.shard, nodeId: unique('node'), ttlMs: LONG_TTL_MS });
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
      const changed = await c.store.putDag(
        spec(dagId, {
          tasks: [
            { id: 'a', type: 'noop' },
            { id: 'c', type: 'noop' },
          ],
        }),
        SHARD_COUNT,
      );
      expect(changed).toEqual({ dagId, version: 2, created: true });
      const second = await c.store.triggerRun(dagId);
      expect(first.dagVersion).toBe(1);
      expect(second.dagVersion).toBe(2);
      expect((await c.store.getRun(first.id)).dagVersion).toBe(1);
      const snapshot = await c.store.loadShard(token);
      expect(snapshot.versions.get(`${dagId}@1`)?.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      expect(snapshot.versions.get(`${dagId}@2`)?.tasks.map((t) => t.id)).toEqual(['a', 'c']);
    });
  });
}
