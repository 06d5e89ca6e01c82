import { describe, expect, it } from 'vitest';
import { NOTIFY_LIMITS, notificationBackoffMs, type NotificationEventItem } from '../../notify/notifications';
import { parseWorkerId } from '../../ids';
import type { LeaderToken } from '../../store';
import type { ContractContext } from './context';
import { LONG_TTL_MS, refusedWith, unique } from './fixtures';

/** The store contract's part on notifications: channels and rules, queueing once per key, claiming, and fenced delivery records. */
export function notificationsContract(c: ContractContext): void {
  describe('notifications', () => {
    const channel = (secret: string | null = 'shh') => c.store.createNotificationChannel({ name: unique('chan'), kind: 'webhook', url: 'http://127.0.0.1:9/hook', secret });
    const failedRun = (dagId: string, subject = unique('run')): NotificationEventItem => ({ event: 'run_failed', dagId, subject, payload: { runId: subject } });

    /** A led shard with a channel and a rule for its DAG's failed runs. */
    async function ruled(): Promise<{ token: LeaderToken; dagId: string; channelId: string; ruleId: string }> {
      const { token, dagId } = await c.leadFreshShard();
      const ch = await channel();
      const rule = await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'run_failed' });
      return { token, dagId, channelId: ch.id, ruleId: rule.id };
    }

    it('creates, lists and deletes channels, never lists a secret, and refuses bad input naming the field without storing it', async () => {
      const name = unique('chan');
      const created = await c.store.createNotificationChannel({ name, kind: 'slack', url: 'https://hooks.example.com/x', secret: 'top-secret' });
      expect(created).toMatchObject({ name, kind: 'slack', url: 'https://hooks.example.com/…', hasSecret: true });
      expect(JSON.stringify(created)).not.toContain('top-secret');
      const listed = (await c.store.listNotificationChannels()).find((ch) => ch.id === created.id);
      expect(listed).toMatchObject({ name, hasSecret: true });
      expect(JSON.stringify(await c.store.listNotificationChannels())).not.toContain('top-secret');

      const bad = [
        [{ name: '  ', kind: 'webhook', url: 'http://x.example' }, 'name'],
        [{ name, kind: 'webhook', url: 'http://x.example' }, 'name'],
        [{ name: unique('chan'), kind: 'email', url: 'http://x.example' }, 'kind'],
        [{ name: unique('chan'), kind: 'webhook', url: 'ftp://x.example/a' }, 'url'],
        [{ name: unique('chan'), kind: 'webhook', url: 'not a url' }, 'url'],
        [{ name: unique('chan'), kind: 'webhook', url: 'http://x.example', secret: '' }, 'secret'],
      ] as const;
      const before = (await c.store.listNotificationChannels()).length;
      for (const [input, field] of bad) {
        const refused = await refusedWith(c.store.createNotificationChannel(input as never), 'INVALID_INPUT');
        expect(refused.details).toMatchObject({ field });
      }
      expect(await c.store.listNotificationChannels()).toHaveLength(before);

      const unsigned = await channel(null);
      expect(unsigned.hasSecret).toBe(false);
      expect(await c.store.deleteNotificationChannel(created.id)).toBe(true);
      expect(await c.store.deleteNotificationChannel(created.id)).toBe(false);
      expect(await c.store.deleteNotificationChannel('not-an-id')).toBe(false);
      expect((await c.store.listNotificationChannels()).some((ch) => ch.id === created.id)).toBe(false);
    });

    it('creates and deletes rules, refuses an unknown channel or event naming the field, and drops a deleted channel’s rules', async () => {
      const ch = await channel();
      const rule = await c.store.createNotificationRule({ channelId: ch.id, dagId: null, event: 'task_failed' });
      expect(rule).toMatchObject({ channelId: ch.id, dagId: null, event: 'task_failed' });
      const perDag = await c.store.createNotificationRule({ channelId: ch.id, dagId: 'some-dag', event: 'run_recovered' });
      expect(perDag.dagId).toBe('some-dag');
      const before = (await c.store.listNotificationRules()).length;
      const gone = await channel();
      await c.store.deleteNotificationChannel(gone.id);
      expect((await refusedWith(c.store.createNotificationRule({ channelId: gone.id, event: 'run_failed' }), 'INVALID_INPUT')).details).toMatchObject({ field: 'channelId' });
      expect((await refusedWith(c.store.createNotificationRule({ channelId: 'x', event: 'run_failed' }), 'INVALID_INPUT')).details).toMatchObject({ field: 'channelId' });
      expect((await refusedWith(c.store.createNotificationRule({ channelId: ch.id, event: 'run_exploded' as never }), 'INVALID_INPUT')).details).toMatchObject({ field: 'event' });
      expect((await refusedWith(c.store.createNotificationRule({ channelId: ch.id, dagId: 'Not A Dag!', event: 'run_failed' }), 'INVALID_INPUT')).details).toMatchObject({
        field: 'dagId',
      });
      expect(await c.store.listNotificationRules()).toHaveLength(before);
      expect(await c.store.deleteNotificationRule(perDag.id)).toBe(true);
      expect(await c.store.deleteNotificationRule(perDag.id)).toBe(false);
      await c.store.deleteNotificationChannel(ch.id);
      expect((await c.store.listNotificationRules()).some((r) => r.id === rule.id)).toBe(false);
    });

    it('queues one notification per event and matching rule, and an event queued twice once', async () => {
      const { token, dagId, channelId, ruleId } = await ruled();
      const other = await c.store.createNotificationRule({ channelId, dagId: `${dagId}-other`, event: 'run_failed' });
      const tasks = await c.store.createNotificationRule({ channelId, dagId, event: 'task_failed' });
      const item = failedRun(dagId);
      const first = await c.store.enqueueNotifications(token, [item, item]);
      expect(first).toHaveLength(1);
      expect(first[0]).toMatchObject({
        dedupeKey: `run_failed:${item.subject}:${ruleId}`,
        ruleId,
        channelId,
        shard: token.shard,
        dagId,
        event: 'run_failed',
        payload: item.payload,
        state: 'pending',
        attempts: 0,
        lastError: null,
        deliveredAt: null,
      });
      expect(await c.store.enqueueNotifications(token, [item])).toEqual([]);
      expect(other.id).not.toBe(tasks.id);
      const pending = await c.store.listNotifications({ state: 'pending', limit: 1000 });
      expect(pending.filter((n) => n.dedupeKey.includes(`:${item.subject}:`))).toHaveLength(1);
    });

    it('refuses a deposed leader’s enqueue, claim and record, writing nothing', async () => {
      const { token, dagId } = await ruled();
      const [queued] = await c.store.enqueueNotifications(token, [failedRun(dagId)]);
      expect((await c.store.dueNotifications(token, 10)).map((n) => n.id)).toEqual([queued!.id]);
      await c.store.releaseShard(token);
      const next = await c.store.acquireShard({ shard: token.shard, nodeId: unique('node'), ttlMs: LONG_TTL_MS });
      expect(next!.token.epoch).toBe(token.epoch + 1);
      const late = failedRun(dagId);
      await refusedWith(c.store.enqueueNotifications(token, [late]), 'DEPOSED_LEADER');
      await refusedWith(c.store.dueNotifications(token, 10), 'DEPOSED_LEADER');
      await refusedWith(c.store.recordDelivery(token, queued!.id, { kind: 'delivered' }), 'DEPOSED_LEADER');
      const all = await c.store.listNotifications({ limit: 1000 });
      expect(all.some((n) => n.dedupeKey.includes(`:${late.subject}:`))).toBe(false);
      expect(all.find((n) => n.id === queued!.id)).toMatchObject({ state: 'pending', attempts: 0, claimedEpoch: token.epoch });
      // The new leader claims it at once, under its own epoch: the deposed leader's claim
      // protects a delivery that will never be recorded.
      const due = await c.store.dueNotifications(next!.token, 10);
      expect(due.map((n) => n.id)).toEqual([queued!.id]);
      expect(due[0]).toMatchObject({ claimedEpoch: next!.token.epoch, channel: { kind: 'webhook', url: 'http://127.0.0.1:9/hook', secret: 'shh' } });
    });

    it('claims due notifications once, backs off a failure, and never changes a delivered one again', async () => {
      const { token, dagId } = await ruled();
      const [a, b] = await c.store.enqueueNotifications(token, [failedRun(dagId), failedRun(dagId)]);
      const due = await c.store.dueNotifications(token, 10);
      expect(due.map((n) => n.id)).toEqual([a!.id, b!.id]);
      // Claimed: not due again while its delivery may be in flight.
      expect(await c.store.dueNotifications(token, 10)).toEqual([]);

      const now = (await c.store.now()).getTime();
      const failed = await c.store.recordDelivery(token, a!.id, { kind: 'failed', error: 'HTTP 500' });
      expect(failed).toMatchObject({ state: 'pending', attempts: 1, lastError: 'HTTP 500', claimedEpoch: null });
      expect(await c.store.dueNotifications(token, 10)).toEqual([]);
      expect(failed!.nextAttemptAt.getTime() - now).toBeGreaterThanOrEqual(notificationBackoffMs(1) - 50);
      expect(failed!.nextAttemptAt.getTime() - now).toBeLessThan(notificationBackoffMs(1) + 5_000);
      const again = await c.store.recordDelivery(token, a!.id, { kind: 'failed', error: 'HTTP 502' });
      expect(again!.nextAttemptAt.getTime() - now).toBeGreaterThanOrEqual(notificationBackoffMs(2) - 50);

      const delivered = await c.store.recordDelivery(token, b!.id, { kind: 'delivered' });
      expect(delivered).toMatchObject({ state: 'delivered', attempts: 1, claimedEpoch: token.epoch });
      expect(delivered!.deliveredAt).not.toBeNull();
      expect(await c.store.recordDelivery(token, b!.id, { kind: 'failed', error: 'late' })).toBeNull();
      expect(await c.store.recordDelivery(token, b!.id, { kind: 'delivered' })).toBeNull();
      expect((await c.store.listNotifications({ state: 'delivered', limit: 1000 })).find((n) => n.id === b!.id)).toMatchObject({ state: 'delivered', attempts: 1 });
    });

    it('makes a notification dead after its last attempt, and lists by state newest first', async () => {
      const { token, dagId } = await ruled();
      const [n, newer] = await c.store.enqueueNotifications(token, [failedRun(dagId), failedRun(dagId)]);
      let last = null;
      for (let i = 0; i < NOTIFY_LIMITS.maxAttempts; i++) last = await c.store.recordDelivery(token, n!.id, { kind: 'failed', error: `attempt ${i + 1}` });
      expect(last).toMatchObject({ state: 'dead', attempts: NOTIFY_LIMITS.maxAttempts, lastError: `attempt ${NOTIFY_LIMITS.maxAttempts}` });
      expect(await c.store.recordDelivery(token, n!.id, { kind: 'delivered' })).toBeNull();
      const dead = await c.store.listNotifications({ state: 'dead', limit: 1000 });
      expect(dead.find((d) => d.id === n!.id)).toMatchObject({ state: 'dead' });
      expect(dead.every((d) => d.state === 'dead')).toBe(true);
      const all = await c.store.listNotifications({ limit: 1000 });
      expect(all.findIndex((d) => d.id === newer!.id)).toBeLessThan(all.findIndex((d) => d.id === n!.id));
      expect(await c.store.listNotifications({ limit: 1 })).toHaveLength(1);
      expect((await refusedWith(c.store.listNotifications({ limit: 0 }), 'INVALID_INPUT')).details).toMatchObject({ field: 'limit' });
      expect((await refusedWith(c.store.listNotifications({ state: 'lost' as never }), 'INVALID_INPUT')).details).toMatchObject({ field: 'state' });
    });

    it('queues for a rule of every DAG, and not for a channel deleted before the claim', async () => {
      const { token, dagId } = await c.leadFreshShard();
      const ch = await channel();
      const everyDag = await c.store.createNotificationRule({ channelId: ch.id, dagId: null, event: 'task_failed' });
      try {
        const item: NotificationEventItem = { event: 'task_failed', dagId, subject: unique('job'), payload: {} };
        const queued = await c.store.enqueueNotifications(token, [item]);
        expect(queued.map((n) => n.ruleId)).toContain(everyDag.id);
        await c.store.deleteNotificationChannel(ch.id);
        expect((await c.store.dueNotifications(token, 10)).some((n) => n.channelId === ch.id)).toBe(false);
      } finally {
        await c.store.deleteNotificationChannel(ch.id);
      }
    });

    it('catches up run_failed for the shard’s recently failed runs, once, and only for rules that existed when they ended', async () => {
      const { token, dagId, ruleId } = await ruled();
      await c.store.putDag({ id: dagId, tasks: [{ id: 'a', type: 'noop' }] }, 4096);
      const run = await c.store.triggerRun(dagId as never);
      await c.store.finishRunsAcross([{ token, items: [{ runId: run.id, state: 'failed' }] }]);
      await c.h.advanceMs(5);
      const later = await c.store.createNotificationRule({
        channelId: (await c.store.listNotificationRules()).find((r) => r.id === ruleId)!.channelId,
        dagId,
        event: 'run_failed',
      });
      const caught = await c.store.catchUpNotifications(token);
      expect(caught.map((n) => n.dedupeKey)).toEqual([`run_failed:${run.id}:${ruleId}`]);
      expect(caught[0]).toMatchObject({
        shard: token.shard,
        dagId,
        event: 'run_failed',
        payload: { runId: run.id, dagId, state: 'failed', scheduledAt: run.scheduledAt.toISOString() },
      });
      expect(later.id).not.toBe(ruleId);
      expect(await c.store.catchUpNotifications(token)).toEqual([]);
      await c.store.releaseShard(token);
      await refusedWith(c.store.catchUpNotifications(token), 'DEPOSED_LEADER');
    });

    it('catches up run_recovered and task_failed with the live path’s keys and payloads, once', async () => {
      const { token, dagId, run: second, ready } = await c.startedRun({ maxAttempts: 1 });
      const ch = await channel();
      const recovered = await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'run_recovered' });
      const tasks = await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'task_failed' });
      try {
        // An earlier run failed; the started run's job fails for good; then a third run succeeds.
        const first = await c.store.triggerRun(dagId as never);
        await c.store.finishRunsAcross([{ token, items: [{ runId: first.id, state: 'failed' }] }]);
        const lease = await c.grantOne(token, ready.id, 'w1');
        const failedJob = await c.store.failJob({ jobId: ready.id, fence: lease.fence, workerId: parseWorkerId('w1'), session: null }, { error: 'boom', retryable: false });
        expect(failedJob.state).toBe('failed');
        await c.h.advanceMs(5);
        const third = await c.store.triggerRun(dagId as never);
        await c.store.startRunsAcross([{ token, items: [{ runId: third.id, jobs: [] }] }]);
        await c.store.finishRunsAcross([{ token, items: [{ runId: third.id, state: 'succeeded' }] }]);
        expect((await c.store.previousRunEnds([third.id])).get(third.id)).toBe('failed');

        const caught = await c.store.catchUpNotifications(token);
        const mine = caught.filter((n) => n.ruleId === recovered.id || n.ruleId === tasks.id);
        expect(mine.map((n) => n.dedupeKey).sort()).toEqual([`run_recovered:${third.id}:${recovered.id}`, `task_failed:${ready.id}:${tasks.id}`].sort());
        expect(mine.find((n) => n.event === 'run_recovered')!.payload).toEqual({ runId: third.id, dagId, scheduledAt: third.scheduledAt.toISOString(), state: 'succeeded' });
        expect(mine.find((n) => n.event === 'task_failed')!.payload).toEqual({ runId: second.id, jobId: ready.id, taskId: 'a', dagId });
        // What the live path queued (here: the same items again) and a second catch-up make nothing new.
        expect(await c.store.catchUpNotifications(token)).toEqual([]);
        expect(
          await c.store.enqueueNotifications(token, [
            { event: 'run_recovered', dagId, subject: third.id, payload: {} },
            { event: 'task_failed', dagId, subject: ready.id, payload: {} },
          ]),
        ).toEqual([]);
      } finally {
        await c.store.deleteNotificationChannel(ch.id);
      }
    });

    it('tells the state of each run’s previous ended run, for a batch in one read', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag({ id: dagId, tasks: [{ id: 'a', type: 'noop' }] }, 4096);
      const first = await c.store.triggerRun(dagId as never);
      expect(await c.store.previousRunEnds([first.id])).toEqual(new Map());
      await c.store.finishRunsAcross([{ token, items: [{ runId: first.id, state: 'failed' }] }]);
      await c.h.advanceMs(5);
      const second = await c.store.triggerRun(dagId as never);
      await c.store.startRunsAcross([{ token, items: [{ runId: second.id, jobs: [] }] }]);
      await c.store.finishRunsAcross([{ token, items: [{ runId: second.id, state: 'succeeded' }] }]);
      await c.h.advanceMs(5);
      const third = await c.store.triggerRun(dagId as never);
      // Each run is judged by its own predecessor; one with none, and an id that is no run, are left out.
      const ends = await c.store.previousRunEnds([third.id, second.id, first.id, '999999999' as never, second.id]);
      expect(ends).toEqual(
        new Map([
          [third.id, 'succeeded'],
          [second.id, 'failed'],
        ]),
      );
      expect(await c.store.previousRunEnds([])).toEqual(new Map());
    });

    it('judges only the runs a run_recovered rule watches when asked to', async () => {
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag({ id: dagId, tasks: [{ id: 'a', type: 'noop' }] }, 4096);
      const first = await c.store.triggerRun(dagId as never);
      await c.store.finishRunsAcross([{ token, items: [{ runId: first.id, state: 'failed' }] }]);
      await c.h.advanceMs(5);
      const second = await c.store.triggerRun(dagId as never);
      expect(await c.store.previousRunEnds([second.id], { watchedOnly: true })).toEqual(new Map());
      const ch = await channel();
      try {
        // A rule of another DAG, or of another event, watches nothing here.
        await c.store.createNotificationRule({ channelId: ch.id, dagId: `${dagId}-other`, event: 'run_recovered' });
        await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'run_failed' });
        expect(await c.store.previousRunEnds([second.id], { watchedOnly: true })).toEqual(new Map());
        await c.store.createNotificationRule({ channelId: ch.id, dagId, event: 'run_recovered' });
        expect(await c.store.previousRunEnds([second.id], { watchedOnly: true })).toEqual(new Map([[second.id, 'failed']]));
        expect(await c.store.previousRunEnds([second.id])).toEqual(new Map([[second.id, 'failed']]));
      } finally {
        await c.store.deleteNotificationChannel(ch.id);
      }
    });
  });
}
