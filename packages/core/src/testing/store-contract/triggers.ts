import { describe, expect, it } from 'vitest';
import { parseDagId, parseJobId } from '../../ids';
import { LIMITS } from '../../limits';
import type { StoreNotice } from '../../store';
import type { ContractContext } from './context';
import { eventually, refusedWith, SHARD_COUNT, spec, unique } from './fixtures';

/** The store contract's part on manual triggers: queued runs, notices, request keys. */
export function triggersContract(c: ContractContext): void {
  describe('manual triggers', () => {
    it('triggerRun queues a manual run and notifies subscribers', async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const seen: StoreNotice[] = [];
      const unsubscribe = await c.store.subscribe((n) => seen.push(n));
      try {
        const run = await c.store.triggerRun(dagId);
        expect(run).toMatchObject({ dagId, trigger: 'manual', state: 'queued', dagVersion: 1 });
        await eventually(() => seen.some((n) => n.kind === 'run-queued' && n.runId === run.id));
        await c.store.notify({ kind: 'job-ended', shard: 1, jobId: parseJobId('42') });
        await eventually(() => seen.some((n) => n.kind === 'job-ended' && n.jobId === '42'));
        // A notice of several jobs arrives with its whole list.
        await c.store.notify({ kind: 'job-ended', shard: 1, jobId: parseJobId('43'), jobIds: ['43', '44', '45'].map((id) => parseJobId(id)) });
        await eventually(() => seen.some((n) => n.kind === 'job-ended' && n.jobId === '43'));
        expect(seen.find((n) => n.kind === 'job-ended' && n.jobId === '43')).toEqual({ kind: 'job-ended', shard: 1, jobId: '43', jobIds: ['43', '44', '45'] });
      } finally {
        await unsubscribe();
      }
      await refusedWith(c.store.triggerRun(parseDagId(unique('missing'))), 'NOT_FOUND');
    });

    it('triggerRun with a request key queues one run per key and DAG, even when sent twice at once', async () => {
      const { dagId } = await c.leadFreshShard();
      const other = parseDagId(unique('keyed-other'));
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

    it("triggerRun's request key is its owner's and names one request: another owner's is its own, other params are refused", async () => {
      const { dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const anns = await c.store.triggerRun(dagId, { requestKey: 'shared-key', requestOwner: 'ann' });
      expect(anns.repeated).toBeUndefined();
      const bobs = await c.store.triggerRun(dagId, { requestKey: 'shared-key', requestOwner: 'bob' });
      expect(bobs.id).not.toBe(anns.id);
      expect(await c.store.triggerRun(dagId, { requestKey: 'shared-key', requestOwner: 'ann' })).toEqual({ ...anns, repeated: true });
      expect((await c.store.triggerRun(dagId, { requestKey: 'shared-key', requestOwner: 'bob', params: {} })).id).toBe(bobs.id);
      const reused = await refusedWith(c.store.triggerRun(dagId, { requestKey: 'shared-key', requestOwner: 'ann', params: { day: 'monday' } }), 'KEY_REUSED');
      expect(reused.details.field).toBe('requestKey');
      expect((await c.store.listRuns({ dagId, limit: 10 })).map((r) => r.id).sort()).toEqual([anns.id, bobs.id].sort());
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
