import { describe, expect, it } from 'vitest';
import { parseDagId } from '../../ids';
import type { ContractContext } from './context';
import { dagIdInFreshShard, refusedWith, SHARD_COUNT, spec, unique } from './fixtures';

/** The store contract's part on dAGs: versions, listing, pausing and refusals of invalid input. */
export function dagsContract(c: ContractContext): void {
  describe('DAGs', () => {
    it('putDag refuses an invalid DAG and leaves the store unchanged', async () => {
      const { dagId } = dagIdInFreshShard('invalid');
      const cyclic = spec(dagId, {
        tasks: [
          { id: 'a', type: 'noop', dependsOn: ['b'] },
          { id: 'b', type: 'noop', dependsOn: ['a'] },
        ],
      });
      await refusedWith(c.store.putDag(cyclic, SHARD_COUNT), 'INVALID_DAG');
      await refusedWith(c.store.getDag(dagId), 'NOT_FOUND');
      expect((await c.store.listDags({ search: dagId })).rows).toEqual([]);

      await c.store.putDag(spec(dagId), SHARD_COUNT);
      await refusedWith(c.store.putDag(cyclic, SHARD_COUNT), 'INVALID_DAG');
      expect((await c.store.getDag(dagId)).version).toBe(1);
      expect(await c.store.listDagVersions(dagId)).toHaveLength(1);
    });

    it('the same spec twice creates one version', async () => {
      const { dagId, shard } = dagIdInFreshShard('same');
      expect(await c.store.putDag(spec(dagId), SHARD_COUNT)).toEqual({ dagId, version: 1, created: true });
      // Key order and filled-in defaults do not make a spec different.
      const reordered = {
        tasks: [
          { type: 'noop', id: 'a' },
          { dependsOn: ['a'], id: 'b', type: 'noop', retries: 0 },
        ],
        id: dagId,
      };
      expect(await c.store.putDag(reordered, SHARD_COUNT)).toEqual({ dagId, version: 1, created: false });
      expect(await c.store.listDagVersions(dagId)).toHaveLength(1);
      const dag = await c.store.getDag(dagId);
      expect(dag).toMatchObject({ id: dagId, shard, version: 1, paused: false, nextRunAt: null });
      expect(dag.spec.tasks.map((t) => t.id)).toEqual(['a', 'b']);
      // A version that does not exist is left out of the read rather than refused.
      const read = await c.store.getDagVersions([
        { dagId, version: 2 },
        { dagId, version: 1 },
      ]);
      expect(read.map((v) => v.version)).toEqual([1]);
      expect(read[0]!.spec).toEqual(dag.spec);
    });

    it('putDag with a request key stores once: a repeat returns the first answer even after the DAG changed', async () => {
      const { dagId } = dagIdInFreshShard('keyed-put');
      // Two first puts with one key at once create the DAG once and answer alike.
      const [first, racing] = await Promise.all([
        c.store.putDag(spec(dagId, { description: 'one' }), SHARD_COUNT, { requestKey: 'apply-1' }),
        c.store.putDag(spec(dagId, { description: 'one' }), SHARD_COUNT, { requestKey: 'apply-1' }),
      ]);
      expect(first).toMatchObject({ dagId, version: 1, created: true });
      expect(racing).toMatchObject({ dagId, version: 1, created: true });
      expect([first.repeated ?? false, racing.repeated ?? false].sort()).toEqual([false, true]);
      // Another client's change lands in between; the retried request must not undo it.
      expect(await c.store.putDag(spec(dagId, { description: 'two' }), SHARD_COUNT)).toEqual({ dagId, version: 2, created: true });
      expect(await c.store.putDag(spec(dagId, { description: 'one' }), SHARD_COUNT, { requestKey: 'apply-1' })).toEqual({ dagId, version: 1, created: true, repeated: true });
      expect((await c.store.getDag(dagId)).version).toBe(2);
      expect(await c.store.listDagVersions(dagId)).toHaveLength(2);
      // A new key is a new request: an unchanged spec stores nothing and says so, and that answer is kept too.
      expect(await c.store.putDag(spec(dagId, { description: 'two' }), SHARD_COUNT, { requestKey: 'apply-2' })).toEqual({ dagId, version: 2, created: false });
      await c.store.putDag(spec(dagId, { description: 'three' }), SHARD_COUNT);
      expect(await c.store.putDag(spec(dagId, { description: 'two' }), SHARD_COUNT, { requestKey: 'apply-2' })).toEqual({ dagId, version: 2, created: false, repeated: true });
      expect((await c.store.getDag(dagId)).version).toBe(3);
      // The key is the DAG's own: the same key on another DAG is another request.
      const other = dagIdInFreshShard('keyed-put-other').dagId;
      expect(await c.store.putDag(spec(other), SHARD_COUNT, { requestKey: 'apply-1' })).toEqual({ dagId: other, version: 1, created: true });
    });

    it("putDag's request key is its owner's and names one spec: another owner's is its own, another spec is refused", async () => {
      const { dagId } = dagIdInFreshShard('owned-put');
      expect(await c.store.putDag(spec(dagId, { description: 'one' }), SHARD_COUNT, { requestKey: 'apply-1', requestOwner: 'ann' })).toEqual({ dagId, version: 1, created: true });
      expect(await c.store.putDag(spec(dagId, { description: 'two' }), SHARD_COUNT, { requestKey: 'apply-1', requestOwner: 'bob' })).toEqual({ dagId, version: 2, created: true });
      const reused = await refusedWith(c.store.putDag(spec(dagId, { description: 'three' }), SHARD_COUNT, { requestKey: 'apply-1', requestOwner: 'ann' }), 'KEY_REUSED');
      expect(reused.details.field).toBe('requestKey');
      expect(await c.store.putDag(spec(dagId, { description: 'one' }), SHARD_COUNT, { requestKey: 'apply-1', requestOwner: 'ann' })).toEqual({
        dagId,
        version: 1,
        created: true,
        repeated: true,
      });
      expect(await c.store.listDagVersions(dagId)).toHaveLength(2);
    });

    it('putDag refuses a malformed request key, naming the field, and stores nothing', async () => {
      const { dagId } = dagIdInFreshShard('bad-key-put');
      for (const requestKey of ['', 'has space', 'x'.repeat(200), "'; drop table dags; --"]) {
        const err = await refusedWith(c.store.putDag(spec(dagId), SHARD_COUNT, { requestKey }), 'INVALID_INPUT');
        expect(err.message).toContain('requestKey');
      }
      await refusedWith(c.store.getDag(dagId), 'NOT_FOUND');
    });

    it('concurrent puts of one DAG create consecutive versions', async () => {
      const { dagId } = dagIdInFreshShard('concurrent');
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const puts = await Promise.all(['one', 'two', 'three'].map((description) => c.store.putDag(spec(dagId, { description }), SHARD_COUNT)));
      expect(puts.map((p) => p.version).sort()).toEqual([2, 3, 4]);
      expect((await c.store.listDagVersions(dagId)).map((v) => v.version)).toEqual([1, 2, 3, 4]);
      expect((await c.store.getDag(dagId)).version).toBe(4);
    });

    it('a new version moves next_run_at only when the schedule changed', async () => {
      const { dagId } = dagIdInFreshShard('sched');
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 3_600_000 } }), SHARD_COUNT);
      const v1 = await c.store.getDag(dagId);
      expect(v1.nextRunAt!.getTime() % 3_600_000).toBe(0);
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 3_600_000 }, description: 'edited' }), SHARD_COUNT);
      const v2 = await c.store.getDag(dagId);
      expect(v2.version).toBe(2);
      expect(v2.nextRunAt).toEqual(v1.nextRunAt);
      await c.store.putDag(spec(dagId, { schedule: { kind: 'manual' }, description: 'edited' }), SHARD_COUNT);
      expect(await c.store.getDag(dagId)).toMatchObject({ version: 3, nextRunAt: null });
    });

    it('takes paused from the spec on creation only, and setPaused changes it', async () => {
      const { dagId } = dagIdInFreshShard('paused');
      await c.store.putDag(spec(dagId, { paused: true }), SHARD_COUNT);
      expect((await c.store.getDag(dagId)).paused).toBe(true);
      expect((await c.store.setPaused(dagId, false)).paused).toBe(false);
      await c.store.putDag(spec(dagId, { paused: true, description: 'v2' }), SHARD_COUNT);
      expect(await c.store.getDag(dagId)).toMatchObject({ version: 2, paused: false });
      await refusedWith(c.store.setPaused(parseDagId(unique('missing')), true), 'NOT_FOUND');
    });

    it('lists DAGs by search with a total, in pages', async () => {
      const prefix = unique('list');
      for (const n of [1, 2, 3]) await c.store.putDag(spec(`${prefix}-${n}`), SHARD_COUNT);
      const all = await c.store.listDags({ search: prefix, sort: 'id', direction: 'asc' });
      expect(all.total).toBe(3);
      expect(all.rows.map((d) => d.id)).toEqual([`${prefix}-1`, `${prefix}-2`, `${prefix}-3`]);
      const page = await c.store.listDags({ search: prefix.toUpperCase(), sort: 'id', direction: 'desc', limit: 1, offset: 1 });
      expect(page.rows.map((d) => d.id)).toEqual([`${prefix}-2`]);
      expect(page.total).toBe(3);
    });
  });
}
