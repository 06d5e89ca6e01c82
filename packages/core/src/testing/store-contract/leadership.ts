import { describe, expect, it } from 'vitest';
import type { ContractContext } from './context';
import {
  dagIdInFreshShard,
  DUE_STEP_MS,
  LONG_TTL_MS,
  MEDIUM_TTL_MS,
  newJobs,
  PAST_MEDIUM_TTL_MS,
  PAST_TTL_MS,
  refusedWith,
  SHARD_COUNT,
  SHORT_TTL_MS,
  spec,
  unique,
} from './fixtures';
import { createScheduledRuns, finishRun, grantLeases, markUpstreamFailed, promoteJobs, startRun } from './one-leader';
import { parseWorkerId } from '../../ids';

/** The store contract's part on shard leadership: acquiring, renewing and releasing shard leases, epochs, and what a deposed leader can no longer write. */
export function leadershipContract(c: ContractContext): void {
  describe('shard leadership', () => {
    it('initCluster fixes the shard count on first call and reports it after', async () => {
      const first = await c.store.initCluster(SHARD_COUNT);
      expect(first.shardCount).toBeGreaterThan(0);
      expect(await c.store.initCluster(first.shardCount + 1)).toEqual(first);
    });

    it('acquireShard by a second node while the first holds it returns null', async () => {
      const { shard } = dagIdInFreshShard('lead');
      const first = await c.store.acquireShard({ shard, nodeId: 'node-a', ttlMs: LONG_TTL_MS });
      expect(first).toMatchObject({ reason: 'new', previousHolder: null });
      expect(await c.store.acquireShard({ shard, nodeId: 'node-b', ttlMs: LONG_TTL_MS })).toBeNull();
      // The same node id taking its own live lease again (a restarted process) gets a new
      // epoch: the earlier process's token must die with it.
      const reclaimed = await c.store.acquireShard({ shard, nodeId: 'node-a', ttlMs: LONG_TTL_MS });
      expect(reclaimed).toMatchObject({ reason: 'reclaimed', previousHolder: null, token: { shard, nodeId: 'node-a', epoch: first!.token.epoch + 1 } });
      const row = (await c.store.listShards()).find((s) => s.shard === shard);
      expect(row).toMatchObject({ holder: 'node-a', epoch: first!.token.epoch + 1 });
      await expect(c.store.renewShard(first!.token, LONG_TTL_MS)).rejects.toMatchObject({ code: 'DEPOSED_LEADER' });
    });

    it('release lets another node take over at once with epoch + 1', async () => {
      const { shard } = dagIdInFreshShard('lead');
      const first = await c.store.acquireShard({ shard, nodeId: 'node-a', ttlMs: LONG_TTL_MS });
      await c.store.releaseShard(first!.token);
      const second = await c.store.acquireShard({ shard, nodeId: 'node-b', ttlMs: LONG_TTL_MS });
      expect(second).toMatchObject({ reason: 'released', token: { shard, nodeId: 'node-b', epoch: first!.token.epoch + 1 } });
      await refusedWith(c.store.renewShard(first!.token, LONG_TTL_MS), 'DEPOSED_LEADER');
    });

    it('contentionView stamps a serving node alive and lists the serving nodes with every shard lease; leaveCluster forgets a node at once', async () => {
      const a = unique('node-a');
      const b = unique('node-b');
      const { shard } = dagIdInFreshShard('lead');
      const held = await c.store.acquireShard({ shard, nodeId: a, ttlMs: LONG_TTL_MS });
      const first = await c.store.contentionView({ nodeId: a, liveWindowMs: MEDIUM_TTL_MS, serving: true });
      expect(first.nodes).toContain(a);
      expect(first.nodes).not.toContain(b);
      expect(first.shards.find((s) => s.shard === shard)).toMatchObject({ holder: a, epoch: held!.token.epoch });
      expect(Math.abs(first.now.getTime() - (await c.store.now()).getTime())).toBeLessThan(5_000);
      const seenByB = await c.store.contentionView({ nodeId: b, liveWindowMs: MEDIUM_TTL_MS, serving: true });
      expect(seenByB.nodes).toEqual(expect.arrayContaining([a, b]));
      expect(seenByB.nodes).toEqual([...seenByB.nodes].sort());
      // A stays listed only as long as it keeps stamping itself.
      await c.h.advanceMs(PAST_MEDIUM_TTL_MS);
      const later = await c.store.contentionView({ nodeId: b, liveWindowMs: MEDIUM_TTL_MS, serving: true });
      expect(later.nodes).toContain(b);
      expect(later.nodes).not.toContain(a);
      await c.store.contentionView({ nodeId: a, liveWindowMs: MEDIUM_TTL_MS, serving: true });
      expect((await c.store.contentionView({ nodeId: b, liveWindowMs: MEDIUM_TTL_MS, serving: true })).nodes).toContain(a);
      await c.store.leaveCluster(a);
      expect((await c.store.contentionView({ nodeId: b, liveWindowMs: MEDIUM_TTL_MS, serving: true })).nodes).not.toContain(a);
    });

    it('a node that serves no workers reads the view without being listed, even by itself', async () => {
      const a = unique('node-a');
      const b = unique('node-b');
      const own = await c.store.contentionView({ nodeId: a, liveWindowMs: LONG_TTL_MS, serving: false });
      expect(own.nodes).not.toContain(a);
      expect((await c.store.contentionView({ nodeId: b, liveWindowMs: LONG_TTL_MS, serving: true })).nodes).not.toContain(a);
      // Once it serves it is listed; when it stops serving it is no longer listed by itself.
      await c.store.contentionView({ nodeId: a, liveWindowMs: LONG_TTL_MS, serving: true });
      expect((await c.store.contentionView({ nodeId: b, liveWindowMs: LONG_TTL_MS, serving: true })).nodes).toContain(a);
      expect((await c.store.contentionView({ nodeId: a, liveWindowMs: LONG_TTL_MS, serving: false })).nodes).not.toContain(a);
    });

    it('contentionView refuses an empty node id or a bad window and stamps nothing', async () => {
      const b = unique('node-b');
      await refusedWith(c.store.contentionView({ nodeId: '', liveWindowMs: 1_000, serving: true }), 'INVALID_INPUT');
      await refusedWith(c.store.contentionView({ nodeId: b, liveWindowMs: 0, serving: true }), 'INVALID_INPUT');
      await refusedWith(c.store.contentionView({ nodeId: b, liveWindowMs: 1.5, serving: true }), 'INVALID_INPUT');
      const nodeC = unique('node-c');
      expect((await c.store.contentionView({ nodeId: nodeC, liveWindowMs: LONG_TTL_MS, serving: true })).nodes).not.toContain(b);
    });

    it('renewShard moves the expiry; after it lapses another node takes over with epoch + 1', async () => {
      const { shard } = dagIdInFreshShard('lead');
      const first = await c.store.acquireShard({ shard, nodeId: 'node-a', ttlMs: LONG_TTL_MS });
      const before = await c.store.now();
      const until = await c.store.renewShard(first!.token, SHORT_TTL_MS);
      expect(until.getTime()).toBeGreaterThanOrEqual(before.getTime() + SHORT_TTL_MS);
      expect(until.getTime()).toBeLessThan(first!.expiresAt.getTime());
      await c.h.advanceMs(PAST_TTL_MS);
      const second = await c.store.acquireShard({ shard, nodeId: 'node-b', ttlMs: LONG_TTL_MS });
      expect(second).toMatchObject({ reason: 'expired', previousHolder: 'node-a', token: { epoch: first!.token.epoch + 1 } });
      await refusedWith(c.store.renewShard(first!.token, LONG_TTL_MS), 'DEPOSED_LEADER');
    });

    it('a node whose own shard lease lapsed takes it again under a new epoch', async () => {
      const { shard } = dagIdInFreshShard('lead');
      const first = await c.store.acquireShard({ shard, nodeId: 'node-a', ttlMs: SHORT_TTL_MS });
      await c.h.advanceMs(PAST_TTL_MS);
      // Its old token must die with the lapse: the node may have missed what happened meanwhile.
      const again = await c.store.acquireShard({ shard, nodeId: 'node-a', ttlMs: LONG_TTL_MS });
      expect(again).toMatchObject({ reason: 'expired', previousHolder: 'node-a', token: { epoch: first!.token.epoch + 1 } });
      await refusedWith(c.store.queuedRuns(first!.token), 'DEPOSED_LEADER');
      expect(await c.store.queuedRuns(again!.token)).toEqual([]);
    });

    it('a write under an old epoch is refused with DeposedLeaderError and writes nothing', async () => {
      const { token: old, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'deposed');
      // A one-second period: the slot is due (store time) before the runs are created.
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 1_000 } }), SHARD_COUNT);
      const run = await c.store.triggerRun(dagId);
      const jobs = await startRun(c.store, old, run.id, newJobs());
      const ready = jobs.find((j) => j.taskId === 'a')!;
      const waiting = jobs.find((j) => j.taskId === 'b')!;
      const queued = await c.store.triggerRun(dagId);
      const dag = await c.store.getDag(dagId);
      // Shorten the shard lease only now, so the setup above cannot outlive it.
      await c.store.renewShard(old, SHORT_TTL_MS);
      const leased = await c.grantOne(old, ready.id, 'w1', SHORT_TTL_MS);

      await c.h.advanceMs(PAST_TTL_MS);
      const taken = await c.store.acquireShard({ shard: old.shard, nodeId: unique('node'), ttlMs: LONG_TTL_MS });
      expect(taken).toMatchObject({ reason: 'expired', previousHolder: old.nodeId, token: { epoch: old.epoch + 1 } });

      await refusedWith(grantLeases(c.store, old, [{ jobId: ready.id, workerId: parseWorkerId('w2') }], LONG_TTL_MS), 'DEPOSED_LEADER');
      await refusedWith(startRun(c.store, old, queued.id, newJobs()), 'DEPOSED_LEADER');
      await refusedWith(promoteJobs(c.store, old, [waiting.id]), 'DEPOSED_LEADER');
      await refusedWith(markUpstreamFailed(c.store, old, [waiting.id]), 'DEPOSED_LEADER');
      await refusedWith(c.store.sweepExpired(old, 100), 'DEPOSED_LEADER');
      await refusedWith(finishRun(c.store, old, run.id, 'failed'), 'DEPOSED_LEADER');
      await refusedWith(c.store.queuedRuns(old), 'DEPOSED_LEADER');
      await refusedWith(c.store.loadShard(old), 'DEPOSED_LEADER');
      const slot = dag.nextRunAt!;
      await refusedWith(createScheduledRuns(c.store, old, dagId, slot, [slot], new Date(slot.getTime() + DUE_STEP_MS)), 'DEPOSED_LEADER');

      // Nothing the old leader tried landed.
      expect(await c.store.getJob(ready.id)).toMatchObject({ state: 'leased', fence: leased.fence, holder: 'w1' });
      expect((await c.store.getJob(waiting.id)).state).toBe('waiting');
      expect(await c.store.getRun(queued.id)).toMatchObject({ state: 'queued' });
      expect(await c.store.listJobs(queued.id)).toEqual([]);
      expect((await c.store.getRun(run.id)).state).toBe('running');
      expect((await c.store.getDag(dagId)).nextRunAt).toEqual(slot);
      expect((await c.store.listRuns({ dagId })).map((r) => r.trigger)).toEqual(['manual', 'manual']);

      // The new leader's token does what the old one could not.
      const now = taken!.token;
      await c.untilDue([slot.getTime()]);
      expect(await c.store.sweepExpired(now, 100)).toEqual([expect.objectContaining({ jobId: ready.id, previousHolder: 'w1' })]);
      expect(await promoteJobs(c.store, now, [waiting.id])).toEqual([waiting.id]);
      expect(await startRun(c.store, now, queued.id, newJobs())).toHaveLength(2);
      expect(await createScheduledRuns(c.store, now, dagId, slot, [slot], new Date(slot.getTime() + DUE_STEP_MS))).toHaveLength(1);
    });
  });
}
