import { describe, expect, it } from 'vitest';
import { type NotificationRow } from '@fenceline/core';
import { Notifier, NotificationWatcher, type DeliveryRequest } from '@fenceline/core/engine';
import { type LeaderToken } from '@fenceline/core/store';
import { memoryStore } from '../src/store/memory-store';

const MINUTE_MS = 60_000;

/** A memory store on a clock the test moves, with a two-shard cluster and a watcher for the shards `tokens` holds. */
async function setup() {
  let nowMs = Date.parse('2026-01-01T00:00:00.000Z');
  const store = memoryStore({ nowMs: () => nowMs });
  await store.initCluster(2);
  const channel = await store.createNotificationChannel({ name: 'c', kind: 'webhook', url: 'http://127.0.0.1:9/hook' });
  const tokens: LeaderToken[] = [];
  let lowest: number | null = 0;
  const queued: NotificationRow[] = [];
  const watcher = (): NotificationWatcher =>
    new NotificationWatcher({
      store,
      tokens: () => tokens,
      lowestLedShard: () => lowest,
      workerLiveWindowMs: 10_000,
      queued: (_token, created) => queued.push(...created),
      failed: (where, err) => {
        throw new Error(`${where}: ${String(err)}`);
      },
    });
  return {
    store,
    channelId: channel.id,
    tokens,
    queued,
    watcher,
    setLowest: (n: number | null) => (lowest = n),
    advance: (ms: number) => (nowMs += ms),
    nowMs: () => nowMs,
  };
}

describe('NotificationWatcher', () => {
  it('tells every missed slot of a paused DAG once, and a new leader after a failover repeats none', async () => {
    const t = await setup();
    await t.store.putDag({ id: 'daily', tasks: [{ id: 'a', type: 'noop' }], schedule: { kind: 'interval', everyMs: MINUTE_MS } }, 2);
    const dag = await t.store.getDag('daily' as never);
    await t.store.setPaused(dag.id, true);
    const first = (await t.store.acquireShard({ shard: dag.shard, nodeId: 'n1', ttlMs: 10 * MINUTE_MS }))!.token;
    t.tokens.push(first);
    const rule = await t.store.createNotificationRule({ channelId: t.channelId, dagId: 'daily', event: 'deadline_missed', afterSeconds: 30 });
    const w = t.watcher();
    // Checks every 10 s up to 3:40: the slots at 0 (the DAG's creation), 1, 2 and 3 minutes have passed their deadline, 30 s later.
    for (let i = 0; i < 22; i++) {
      t.advance(10_000);
      await w.check();
    }
    const slots = [0, 1, 2, 3].map((m) => new Date(Date.parse('2026-01-01T00:00:00.000Z') + m * MINUTE_MS).toISOString());
    expect(t.queued.map((n) => n.dedupeKey)).toEqual(slots.map((s) => `deadline_missed:daily@${s}:${rule.id}`));
    expect(t.queued[0]!.payload).toEqual({ dagId: 'daily', scheduledAt: slots[0], afterSeconds: 30, runId: null, state: null });

    // The leader is deposed; its successor looks back and finds the same slots queued already.
    await t.store.releaseShard(first);
    const second = (await t.store.acquireShard({ shard: dag.shard, nodeId: 'n2', ttlMs: 10 * MINUTE_MS }))!.token;
    t.tokens.splice(0, 1, second);
    await t.watcher().check();
    expect(t.queued).toHaveLength(4);
  });

  it('hands what a check queued to the notifier, which sends each event’s Slack text', async () => {
    const t = await setup();
    const slack = await t.store.createNotificationChannel({ name: 's', kind: 'slack', url: 'http://127.0.0.1:9/slack' });
    await t.store.putDag({ id: 'late', tasks: [{ id: 'a', type: 'noop' }], schedule: { kind: 'interval', everyMs: MINUTE_MS } }, 2);
    const dag = await t.store.getDag('late' as never);
    await t.store.setPaused(dag.id, true);
    const zero = (await t.store.acquireShard({ shard: 0, nodeId: 'n1', ttlMs: 60 * MINUTE_MS }))!.token;
    const one = (await t.store.acquireShard({ shard: 1, nodeId: 'n1', ttlMs: 60 * MINUTE_MS }))!.token;
    t.tokens.push(zero, one);
    await t.store.createNotificationRule({ channelId: slack.id, dagId: 'late', event: 'deadline_missed', afterSeconds: 30 });
    await t.store.createNotificationRule({ channelId: slack.id, event: 'pool_no_worker', afterSeconds: 5, pool: 'gpu' });
    await t.store.registerWorker({ id: 'gpu-1' as never, slots: 1, nodeId: 'n1', meta: { offer: { pool: 'gpu', labels: [], types: ['noop'] } }, session: 's', credentialId: null });
    const sent: DeliveryRequest[] = [];
    const notifier = new Notifier({
      store: t.store,
      io: { deliver: async (r) => (sent.push(r), { status: 200 }), sign: () => 'unused' },
      clock: { nowMs: t.nowMs },
      tokens: () => t.tokens,
      metric: () => undefined,
      onError: (where, err) => {
        throw new Error(`${where}: ${String(err)}`);
      },
    });
    const w = new NotificationWatcher({
      store: t.store,
      tokens: () => t.tokens,
      lowestLedShard: () => 0,
      workerLiveWindowMs: 10_000,
      queued: (token, created) => notifier.queued(token, created),
      failed: (where, err) => notifier.failed(where, null, err),
    });
    t.advance(31_000);
    await w.check();
    await notifier.deliverDue();
    expect(
      sent
        .map((r) => JSON.parse(r.body) as { text: string })
        .map((b) => b.text)
        .sort(),
    ).toEqual(
      [
        'fenceline: DAG late missed its deadline: the run scheduled at 2026-01-01T00:00:00.000Z had not succeeded 30 s later',
        'fenceline: pool gpu has had no live worker for more than 5 s',
      ].sort(),
    );
  });

  it('says nothing of deadlines that passed before the rule existed', async () => {
    const t = await setup();
    await t.store.putDag({ id: 'hourly', tasks: [{ id: 'a', type: 'noop' }], schedule: { kind: 'interval', everyMs: MINUTE_MS } }, 2);
    const dag = await t.store.getDag('hourly' as never);
    t.tokens.push((await t.store.acquireShard({ shard: dag.shard, nodeId: 'n1', ttlMs: 60 * MINUTE_MS }))!.token);
    t.advance(5 * MINUTE_MS);
    await t.store.createNotificationRule({ channelId: t.channelId, event: 'deadline_missed', afterSeconds: 30 });
    const w = t.watcher();
    await w.check();
    expect(t.queued).toEqual([]);
    // The next slot's deadline passes after the rule was made: that one is told.
    t.advance(MINUTE_MS);
    await w.check();
    expect(t.queued.map((n) => n.payload.scheduledAt)).toEqual([new Date(Date.parse('2026-01-01T00:05:00.000Z')).toISOString()]);
  });

  it('watches the cluster only from the lowest led shard, once per leaderless episode', async () => {
    const t = await setup();
    const zero = (await t.store.acquireShard({ shard: 0, nodeId: 'n1', ttlMs: 60 * MINUTE_MS }))!.token;
    const one = (await t.store.acquireShard({ shard: 1, nodeId: 'n2', ttlMs: 60 * MINUTE_MS }))!.token;
    const rule = await t.store.createNotificationRule({ channelId: t.channelId, event: 'shard_leaderless', afterSeconds: 5 });
    await t.store.releaseShard(one);
    t.advance(6_000);
    // A node that does not lead the lowest led shard does not watch.
    t.tokens.push(one);
    await t.watcher().check();
    expect(t.queued).toEqual([]);
    t.tokens.splice(0, 1, zero);
    await t.watcher().check();
    await t.watcher().check();
    expect(t.queued.map((n) => n.dedupeKey)).toEqual([`shard_leaderless:shard:1:epoch:${one.epoch}:${rule.id}`]);
    // Led again and left again: a new episode, a new notification.
    const again = (await t.store.acquireShard({ shard: 1, nodeId: 'n3', ttlMs: 60 * MINUTE_MS }))!.token;
    await t.store.releaseShard(again);
    t.advance(6_000);
    await t.watcher().check();
    expect(t.queued.map((n) => n.dedupeKey)).toEqual([`shard_leaderless:shard:1:epoch:${one.epoch}:${rule.id}`, `shard_leaderless:shard:1:epoch:${again.epoch}:${rule.id}`]);
    t.setLowest(null);
  });
});
