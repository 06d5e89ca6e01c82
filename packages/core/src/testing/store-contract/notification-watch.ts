import { describe, expect, it } from 'vitest';
import { parseWorkerId } from '../../ids';
import type { DeadlineCheck } from '../../notify/notifications';
import type { ContractContext } from './context';
import { LONG_TTL_MS, refusedWith, SHARD_COUNT, spec, unique } from './fixtures';
import { createScheduledRuns, finishRun, startRun } from './one-leader';

const SECOND_MS = 1_000;

/**
 * The store contract's part on timed notifications: what a deadline check reads, which
 * missed slots it queues (once, and only those no run met), and the cluster check's
 * episodes of a shard without a leader and a pool without a live worker.
 */
export function notificationWatchContract(c: ContractContext): void {
  describe('notification watch', () => {
    const channel = () => c.store.createNotificationChannel({ name: unique('chan'), kind: 'webhook', url: 'http://127.0.0.1:9/hook' });

    it('queues deadline_missed once per slot no run met by its deadline, and only for rules and DAGs that existed by then', async () => {
      const { token, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'deadline');
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: SECOND_MS } }), SHARD_COUNT);
      const ch = await channel();
      const rule = await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'deadline_missed', afterSeconds: 1 });
      const s1 = (await c.store.getDag(dagId)).nextRunAt!;
      const at = (k: number): Date => new Date(s1.getTime() + k * SECOND_MS);

      // Slot 0 succeeds in time, slot 1 fails, slot 2 gets no run at all (a paused DAG, a
      // stopped scheduler), slot 3's deadline has not come, and slot -5 is before the DAG.
      await c.untilDue([at(0).getTime()]);
      const [met] = await createScheduledRuns(c.store, token, dagId, at(0), [at(0)], at(1));
      await startRun(c.store, token, met!.id, []);
      expect(await finishRun(c.store, token, met!.id, 'succeeded')).toBe(true);
      await c.untilDue([at(1).getTime()]);
      const [failed] = await createScheduledRuns(c.store, token, dagId, at(1), [at(1)], at(2));
      expect(await finishRun(c.store, token, failed!.id, 'failed')).toBe(true);
      await c.untilDue([at(3).getTime()]);

      const watch = await c.store.notificationWatch([token.shard]);
      expect(watch.deadlineRules).toContainEqual(expect.objectContaining({ id: rule.id, dagId, afterSeconds: 1 }));
      expect(watch.dags).toContainEqual(expect.objectContaining({ id: dagId, shard: token.shard, schedule: { kind: 'interval', everyMs: SECOND_MS } }));
      expect(watch.now.getTime()).toBeGreaterThanOrEqual(at(3).getTime());

      const checks: DeadlineCheck[] = [-5, 0, 1, 2, 3].map((k) => ({ ruleId: rule.id, dagId, scheduledAt: at(k) }));
      const queued = await c.store.enqueueMissedDeadlines(token, checks);
      expect(queued.map((n) => n.dedupeKey).sort()).toEqual([1, 2].map((k) => `deadline_missed:${dagId}@${at(k).toISOString()}:${rule.id}`).sort());
      const byKey = new Map(queued.map((n) => [n.dedupeKey, n]));
      expect(byKey.get(`deadline_missed:${dagId}@${at(1).toISOString()}:${rule.id}`)).toMatchObject({
        shard: token.shard,
        dagId,
        event: 'deadline_missed',
        state: 'pending',
        payload: { dagId, scheduledAt: at(1).toISOString(), afterSeconds: 1, runId: failed!.id, state: 'failed' },
      });
      expect(byKey.get(`deadline_missed:${dagId}@${at(2).toISOString()}:${rule.id}`)!.payload).toEqual({
        dagId,
        scheduledAt: at(2).toISOString(),
        afterSeconds: 1,
        runId: null,
        state: null,
      });
      // The same checks again (another leader after a failover) queue nothing new.
      expect(await c.store.enqueueMissedDeadlines(token, checks)).toEqual([]);

      // A rule made now says nothing of deadlines that passed before it existed.
      const late = await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'deadline_missed', afterSeconds: 1 });
      expect(await c.store.enqueueMissedDeadlines(token, [{ ruleId: late.id, dagId, scheduledAt: at(2) }])).toEqual([]);
      // A check under a rule of another event or DAG matches nothing.
      const other = await c.store.createNotificationRule({ channelId: ch.id, dagId: `${dagId}-other`, event: 'deadline_missed', afterSeconds: 1 });
      expect(await c.store.enqueueMissedDeadlines(token, [{ ruleId: other.id, dagId, scheduledAt: at(2) }])).toEqual([]);

      await c.store.releaseShard(token);
      await refusedWith(c.store.enqueueMissedDeadlines(token, checks), 'DEPOSED_LEADER');
      await c.store.deleteNotificationChannel(ch.id);
    });

    it('refuses bad deadline checks and timed events given as plain events, naming the field and queueing nothing', async () => {
      const { token, dagId } = await c.leadFreshShard();
      const bad = await refusedWith(c.store.enqueueMissedDeadlines(token, [{ ruleId: 'x', dagId, scheduledAt: new Date() }]), 'INVALID_INPUT');
      expect(bad.details).toMatchObject({ field: 'checks.0.ruleId' });
      const badDate = await refusedWith(c.store.enqueueMissedDeadlines(token, [{ ruleId: '1', dagId, scheduledAt: new Date(Number.NaN) }]), 'INVALID_INPUT');
      expect(badDate.details).toMatchObject({ field: 'checks.0.scheduledAt' });
      const timed = await refusedWith(c.store.enqueueNotifications(token, [{ event: 'deadline_missed', dagId, subject: 'x', payload: {} }]), 'INVALID_INPUT');
      expect(timed.details).toMatchObject({ field: 'items.0.event' });
    });

    it('reads no DAG for deadlines when no deadline rule covers it, and a manual DAG never', async () => {
      const { token, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'nodeadline');
      await c.store.putDag(spec(dagId, { schedule: { kind: 'interval', everyMs: 60 * SECOND_MS } }), SHARD_COUNT);
      const ch = await channel();
      const elsewhere = await c.store.createNotificationRule({ channelId: ch.id, dagId: `${dagId}-elsewhere`, event: 'deadline_missed', afterSeconds: 5 });
      try {
        expect((await c.store.notificationWatch([token.shard])).dags.map((d) => d.id)).not.toContain(dagId);
        const manual = `${dagId}-manual`;
        await c.store.putDag(spec(manual), SHARD_COUNT);
        const everyDag = await c.store.createNotificationRule({ channelId: ch.id, event: 'deadline_missed', afterSeconds: 5 });
        const watch = await c.store.notificationWatch([token.shard]);
        expect(watch.dags.map((d) => d.id)).toContain(dagId);
        expect(watch.dags.map((d) => d.id)).not.toContain(manual);
        expect(watch.deadlineRules.map((r) => r.id)).toEqual(expect.arrayContaining([elsewhere.id, everyDag.id]));
      } finally {
        await c.store.deleteNotificationChannel(ch.id);
      }
    });

    it('queues one notification per episode of a shard without a leader and of a pool without a live worker', async () => {
      const ch = await channel();
      const { token: watcher } = await c.leadFreshShard();
      const { token: lost } = await c.leadFreshShard(LONG_TTL_MS, 'lost');
      const pool = unique('pool').toLowerCase();
      const shardRule = await c.store.createNotificationRule({ channelId: ch.id, event: 'shard_leaderless', afterSeconds: 1 });
      const poolRule = await c.store.createNotificationRule({ channelId: ch.id, event: 'pool_no_worker', afterSeconds: 1, pool });
      try {
        const workerId = parseWorkerId(`${pool}-w1`);
        const seen = await c.store.registerWorker({
          id: workerId,
          slots: 1,
          nodeId: null,
          meta: { offer: { pool, labels: [], types: ['noop'] } },
          session: unique('s'),
          credentialId: null,
        });
        await c.store.releaseShard(lost);
        const liveWindowMs = 500;
        // Neither episode is past its bound yet: the shard was left just now, the pool's worker is live.
        const early = await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: liveWindowMs });
        expect(early.some((n) => n.dedupeKey.startsWith(`shard_leaderless:shard:${lost.shard}:`))).toBe(false);
        expect(early.some((n) => n.ruleId === poolRule.id)).toBe(false);

        await c.h.advanceMs(liveWindowMs + SECOND_MS + 100);
        const queued = await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: liveWindowMs });
        const shardKey = `shard_leaderless:shard:${lost.shard}:epoch:${lost.epoch}:${shardRule.id}`;
        const mine = queued.filter((n) => n.dedupeKey === shardKey || n.ruleId === poolRule.id);
        expect(mine.map((n) => n.dedupeKey).sort()).toEqual([shardKey, `pool_no_worker:pool:${pool}:${seen.lastSeen.toISOString()}:${poolRule.id}`].sort());
        expect(mine.find((n) => n.dedupeKey === shardKey)).toMatchObject({ shard: watcher.shard, dagId: null, payload: { shard: lost.shard, epoch: lost.epoch, afterSeconds: 1 } });
        expect(mine.find((n) => n.ruleId === poolRule.id)).toMatchObject({ shard: watcher.shard, dagId: null, payload: { pool, afterSeconds: 1 } });
        // The watcher's check again, or another watcher's, is the same episode: nothing new.
        expect(await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: liveWindowMs })).toEqual([]);

        // The shard led again is no longer leaderless; a worker back makes the pool live.
        const back = await c.store.acquireShard({ shard: lost.shard, nodeId: unique('node'), ttlMs: LONG_TTL_MS });
        await c.store.heartbeatWorkers([{ workerId, silentMs: 0 }], null);
        const after = await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: liveWindowMs });
        expect(after.filter((n) => n.dedupeKey.startsWith(`shard_leaderless:shard:${lost.shard}:`) || n.ruleId === poolRule.id)).toEqual([]);
        await c.store.releaseShard(back!.token);
        await c.store.releaseShard(watcher);
        await refusedWith(c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: liveWindowMs }), 'DEPOSED_LEADER');
      } finally {
        // Every never-led shard of the store is leaderless too: the rules go, so later tests queue none of those.
        await c.store.deleteNotificationChannel(ch.id);
      }
    });

    it('counts a pool a rule or a task names, from when it was named, though no worker ever served it', async () => {
      const ch = await channel();
      const { token: watcher, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'pools');
      const ruled = unique('ruled').toLowerCase();
      const tasked = unique('tasked').toLowerCase();
      try {
        const named = await c.store.createNotificationRule({ channelId: ch.id, event: 'pool_no_worker', afterSeconds: 1, pool: ruled });
        const every = await c.store.createNotificationRule({ channelId: ch.id, event: 'pool_no_worker', afterSeconds: 1 });
        await c.store.putDag(spec(dagId, { tasks: [{ id: 'train', type: 'noop', pool: tasked }] }), SHARD_COUNT);
        const mine = <T extends { payload: Record<string, unknown> }>(queued: T[]): T[] => queued.filter((n) => n.payload.pool === ruled || n.payload.pool === tasked);
        // Named just now: not yet past the rules' second.
        expect(mine(await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: 500 }))).toEqual([]);
        await c.h.advanceMs(SECOND_MS + 150);
        const queued = mine(await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: 500 }));
        expect(queued.map((n) => n.dedupeKey).sort()).toEqual(
          [`pool_no_worker:pool:${ruled}:none:${named.id}`, `pool_no_worker:pool:${ruled}:none:${every.id}`, `pool_no_worker:pool:${tasked}:none:${every.id}`].sort(),
        );
        expect(queued.find((n) => n.payload.pool === tasked)).toMatchObject({ event: 'pool_no_worker', dagId: null, payload: { pool: tasked, lastSeen: null, afterSeconds: 1 } });
        // One episode: the next check queues nothing more.
        expect(mine(await c.store.enqueueClusterNotifications(watcher, { workerLiveWindowMs: 500 }))).toEqual([]);
      } finally {
        await c.store.deleteNotificationChannel(ch.id);
      }
    });
  });
}
