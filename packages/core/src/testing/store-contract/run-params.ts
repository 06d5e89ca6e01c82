import { describe, expect, it } from 'vitest';
import type { InvalidInputError } from '../../errors';
import type { DagSpecInput } from '../../spec';
import type { StoreNotice } from '../../store';
import type { ContractContext } from './context';
import { DUE_STEP_MS, eventually, refusedWith, SHARD_COUNT, spec } from './fixtures';
import { createScheduledRunsMany } from './one-leader';

const PARAMS: NonNullable<DagSpecInput['params']> = {
  region: { type: 'string', enum: ['eu', 'us'], default: 'eu' },
  batch: { type: 'integer', required: true },
  dryRun: { type: 'boolean', default: false },
};

/** The store contract's part on run parameters: checked before a trigger writes, stored with the run, carried to its leader. */
export function runParamsContract(c: ContractContext): void {
  describe('run params', () => {
    it('triggerRun stores the resolved params with the run, and the notice, the shard load and the queued runs carry them', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId, { params: PARAMS }), SHARD_COUNT);
      const seen: StoreNotice[] = [];
      const unsubscribe = await c.store.subscribe((n) => seen.push(n));
      try {
        const run = await c.store.triggerRun(dagId, { params: { batch: 7, region: 'us' } });
        const resolved = { region: 'us', batch: 7, dryRun: false };
        expect(run.params).toEqual(resolved);
        expect((await c.store.getRun(run.id)).params).toEqual(resolved);
        expect((await c.store.listRuns({ dagId, limit: 5 }))[0]!.params).toEqual(resolved);
        await eventually(() => seen.some((n) => n.kind === 'run-queued' && n.runId === run.id));
        expect(seen.find((n) => n.kind === 'run-queued' && n.runId === run.id)).toMatchObject({ params: resolved });
        expect((await c.store.queuedRuns(token)).find((r) => r.id === run.id)?.params).toEqual(resolved);
        expect((await c.store.loadShard(token)).runs.find((r) => r.id === run.id)?.params).toEqual(resolved);
      } finally {
        await unsubscribe();
      }
    });

    it('triggerRun refuses bad params, naming every bad field, and queues nothing', async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId, { params: PARAMS }), SHARD_COUNT);
      const err = (await refusedWith(c.store.triggerRun(dagId, { params: { region: 'asia', dryRun: 'yes', colour: 'red' } }), 'INVALID_INPUT')) as InvalidInputError;
      expect((err.details.issues as { field: string }[]).map((i) => i.field).sort()).toEqual(['params.batch', 'params.colour', 'params.dryRun', 'params.region']);
      expect(await c.store.listRuns({ dagId, limit: 10 })).toEqual([]);
    });

    it('a run of a DAG without params has none, and a trigger may not invent them', async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      expect((await c.store.triggerRun(dagId)).params).toEqual({});
      await refusedWith(c.store.triggerRun(dagId, { params: { anything: 1 } }), 'INVALID_INPUT');
      expect(await c.store.listRuns({ dagId, limit: 10 })).toHaveLength(1);
    });

    it('a scheduled run stores the params its leader created it with', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 }, params: { region: PARAMS.region! } }), SHARD_COUNT);
      const slot = (await c.store.getDag(dagId)).nextRunAt!;
      await c.untilDue([slot.getTime() + DUE_STEP_MS]);
      const [created] = await createScheduledRunsMany(c.store, token, [
        { dagId, expectedNextRunAt: slot, slots: [slot], nextRunAt: new Date(slot.getTime() + 2 * DUE_STEP_MS), params: { region: 'eu' } },
      ]);
      expect(created!.map((r) => r.params)).toEqual([{ region: 'eu' }]);
      expect((await c.store.getRun(created![0]!.id)).params).toEqual({ region: 'eu' });
    });
  });
}
