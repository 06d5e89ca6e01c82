import { describe, expect, it } from 'vitest';
import { parseRunId, parseWorkerId } from '../../ids';
import { planRunAction } from '../../run/actions';
import type { DagSpec } from '../../spec';
import type { LeaderToken, RunActionRow, RunActionWrite, StoreNotice } from '../../store';
import type { ContractContext } from './context';
import { eventually, refusedWith, SHARD_COUNT, spec } from './fixtures';
import { completeJob, finishRun } from './one-leader';

/** The write a leader makes for `action`, planned from the run as the store has it now. */
async function planned(c: ContractContext, action: RunActionRow): Promise<RunActionWrite> {
  const read = await c.store.readRun(action.runId);
  const versions = await c.store.getDagVersions([{ dagId: read!.run.dagId, version: read!.run.dagVersion }]);
  const plan = planRunAction(
    versions[0]!.spec as DagSpec,
    read!.jobs.map((j) => ({ jobId: j.id, taskId: j.taskId, state: j.state })),
    action,
  );
  return {
    actionId: action.id,
    runId: action.runId,
    changes: plan.changes,
    runState: plan.runState,
    note: `${action.kind} by ${action.requestedBy}`,
    result: { changed: plan.changes.map((ch) => ({ taskId: ch.taskId, from: ch.from, to: ch.to })), runState: read!.run.state },
  };
}

async function apply(c: ContractContext, token: LeaderToken, action: RunActionRow) {
  return c.store.applyRunAction(token, await planned(c, action));
}

/** The store contract's part on operator actions: requests, their checks, and the leader's conditional write. */
export function runActionsContract(c: ContractContext): void {
  describe('operator actions on runs', () => {
    it('stores a request pending with a notice, and refuses a bad one naming each field, storing nothing', async () => {
      const { run } = await c.startedRun();
      const seen: StoreNotice[] = [];
      const unsubscribe = await c.store.subscribe((n) => seen.push(n));
      try {
        const action = await c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops' });
        expect(action).toMatchObject({ runId: run.id, kind: 'cancel', state: 'pending', taskIds: [], downstream: false, requestedBy: 'ops', result: null });
        await eventually(() => seen.some((n) => n.kind === 'run-action' && n.actionId === action.id && n.runId === run.id));
        expect(await c.store.getRunAction(action.id)).toMatchObject({ id: action.id, state: 'pending' });
      } finally {
        await unsubscribe();
      }
      const bad = await refusedWith(c.store.requestRunAction({ runId: run.id, kind: 'mark_failed', taskIds: ['a', 'nope'], reason: '', requestedBy: 'ops' }), 'INVALID_INPUT');
      const fields = (bad.details.issues as { field: string }[]).map((i) => i.field);
      expect(fields).toEqual(['taskIds', 'reason']);
      await refusedWith(c.store.requestRunAction({ runId: run.id, kind: 'clear', requestedBy: 'ops' }), 'INVALID_INPUT');
      await refusedWith(c.store.requestRunAction({ runId: run.id, kind: 'explode' as 'cancel', requestedBy: 'ops' }), 'INVALID_INPUT');
      await refusedWith(c.store.requestRunAction({ runId: parseRunId('999999999999'), kind: 'cancel', requestedBy: 'ops' }), 'NOT_FOUND');
      expect((await c.store.listRunActions(run.id)).length).toBe(1);
      // A request key makes a request sent twice one action.
      const [one, two] = await Promise.all([
        c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops', requestKey: 'k-1' }),
        c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops', requestKey: 'k-1' }),
      ]);
      expect(two.id).toBe(one.id);
      expect((await c.store.listRunActions(run.id)).length).toBe(2);
      // The key is its owner's: another owner's request with it is stored; the owner's key with another request is refused.
      const theirs = await c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'bob', requestKey: 'k-1', requestOwner: 'bob' });
      expect(theirs.id).not.toBe(one.id);
      expect(await c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'bob', requestKey: 'k-1', requestOwner: 'bob' })).toEqual({ ...theirs, repeated: true });
      const reused = await refusedWith(c.store.requestRunAction({ runId: run.id, kind: 'cancel', reason: 'other', requestedBy: 'ops', requestKey: 'k-1' }), 'KEY_REUSED');
      expect(reused.details.field).toBe('requestKey');
      expect((await c.store.listRunActions(run.id)).length).toBe(3);
    });

    it('cancels a run: open jobs end cancelled, a held lease is revoked and its late result refused', async () => {
      const { token, run, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      const action = await c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops' });
      expect((await c.store.pendingRunActions(token)).map((a) => a.id)).toContain(action.id);
      const out = await apply(c, token, action);
      expect(out.kind).toBe('applied');
      if (out.kind !== 'applied') return;
      expect(out.run.state).toBe('cancelled');
      expect(out.jobs.map((j) => j.state)).toEqual(['cancelled', 'cancelled']);
      expect(out.revoked).toEqual([{ jobId: ready.id, fence: lease.fence + 1, holder: 'w1' }]);
      expect(out.action).toMatchObject({ state: 'applied', result: { runState: 'cancelled' } });
      await refusedWith(completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { output: 'late' }), 'STALE_FENCE');
      expect(await c.store.getResult(ready.id)).toBeNull();
      // Applying it again writes nothing: the action is done.
      expect((await apply(c, token, action)).kind).toBe('done');
      expect((await c.store.pendingRunActions(token)).map((a) => a.id)).not.toContain(action.id);
    });

    it('writes nothing when a job moved since the plan was read, and refuses a deposed leader', async () => {
      const { token, run, ready } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      const action = await c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops' });
      const write = await planned(c, action);
      // The result lands between the plan and its write.
      await completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { output: 1 });
      expect((await c.store.applyRunAction(token, write)).kind).toBe('conflict');
      expect((await c.store.getJob(ready.id)).state).toBe('succeeded');
      expect((await c.store.getRunAction(action.id)).state).toBe('pending');
      await refusedWith(c.store.applyRunAction({ ...token, epoch: token.epoch + 7 }, await planned(c, action)), 'DEPOSED_LEADER');
      expect((await c.store.getRun(run.id)).state).toBe('running');
    });

    it('clears a finished task and its downstream with fresh attempts and higher fences, reopening the run', async () => {
      const { token, run, ready, waiting } = await c.startedRun();
      const lease = await c.grantOne(token, ready.id, 'w1');
      await completeJob(c.store, { jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { output: 1 });
      // b is left waiting; mark it failed by hand, then finish the run as a leader would.
      const marked = await c.store.requestRunAction({ runId: run.id, kind: 'mark_failed', taskIds: ['b'], reason: 'broken upstream data', requestedBy: 'ops' });
      const out = await apply(c, token, marked);
      expect(out.kind === 'applied' && out.jobs.find((j) => j.id === waiting.id)).toMatchObject({ state: 'failed', lastError: 'mark_failed by ops' });
      expect(await finishRun(c.store, token, run.id, 'failed')).toBe(true);
      const clear = await c.store.requestRunAction({ runId: run.id, kind: 'clear', taskIds: ['a'], downstream: true, requestedBy: 'ops' });
      const cleared = await apply(c, token, clear);
      expect(cleared.kind).toBe('applied');
      if (cleared.kind !== 'applied') return;
      expect(cleared.run).toMatchObject({ state: 'running', endedAt: null });
      const a = cleared.jobs.find((j) => j.id === ready.id)!;
      const b = cleared.jobs.find((j) => j.id === waiting.id)!;
      expect(a).toMatchObject({ state: 'waiting', attempt: 0, holder: null, endedAt: null, lastError: null });
      expect(a.fence).toBeGreaterThan(lease.fence);
      expect(b).toMatchObject({ state: 'waiting', attempt: 0 });
      // A run with open jobs does not finish, whatever its leader believes.
      expect(await finishRun(c.store, token, run.id, 'succeeded')).toBe(false);
      expect((await c.store.listRunActions(run.id)).map((x) => x.kind)).toEqual(['clear', 'mark_failed']);
    });

    it('keeps actions of other shards from a leader', async () => {
      const { run } = await c.startedRun();
      const other = await c.leadFreshShard();
      await c.store.putDag(spec(other.dagId), SHARD_COUNT);
      const action = await c.store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops' });
      expect((await c.store.pendingRunActions(other.token)).map((a) => a.id)).not.toContain(action.id);
      await refusedWith(c.store.applyRunAction(other.token, await planned(c, action)), 'NOT_FOUND');
    });
  });
}
