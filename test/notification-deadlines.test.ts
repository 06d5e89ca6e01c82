import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, type DagSpecInput, type NotificationRow } from '@fenceline/core';
import { sleep } from '../tools/start/cluster';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';
import { Receiver, type Received } from './support/webhook-receiver';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);
const SECRET = 'deadline-test-secret';
const EVERY_MS = 3_000;

/**
 * A DAG on a 3-second schedule whose first slot is 1.5 s away, so a test can pause it (or
 * leave it to a cluster without workers) before any slot comes.
 */
function scheduled(id: string): DagSpecInput {
  return { id, tasks: [{ id: 'a', type: 'noop' }], schedule: { kind: 'interval', everyMs: EVERY_MS, anchor: new Date(Date.now() + 1_500).toISOString() } };
}

/** The slot of a deadline_missed key (`deadline_missed:<dag>@<slot>:<rule>`). */
function slotOf(key: string): number {
  return Date.parse(key.split('@')[1]!.split(':').slice(0, -1).join(':'));
}

/** Checks that the keys name consecutive slots of the schedule, the first at `firstMs`. */
function expectConsecutiveSlots(keys: string[], firstMs: number): void {
  const slots = keys.map(slotOf).sort((a, b) => a - b);
  expect(slots).toEqual(slots.map((_, i) => firstMs + i * EVERY_MS));
}

/** Deadlines checked every half second, so a deadline of 1 s is told within about two. */
describe('notifications: deadlines missed, told by a real cluster to a local receiver', () => {
  let f: Fixture;
  const receiver = new Receiver(SECRET);

  beforeAll(async () => {
    await receiver.start();
    f = await startFixture({ schedulers: 2, workers: 0, env: { FENCELINE_NOTIFY_CHECK_INTERVAL_MS: '500' } });
  });
  afterAll(async () => {
    await f?.stop();
    await receiver.stop();
  });

  async function rowsOf(dagId: string): Promise<NotificationRow[]> {
    return (await f.store.listNotifications({ limit: 1000 })).filter((n) => n.dagId === dagId && n.event === 'deadline_missed');
  }

  /** The distinct keys the receiver got on a path, each with how many times. */
  function countsOn(path: string): Map<string, number> {
    const counts = new Map<string, number>();
    for (const r of receiver.received.filter((x: Received) => x.path === path)) counts.set(r.key, (counts.get(r.key) ?? 0) + 1);
    return counts;
  }

  it('tells each slot of a paused DAG that never started a run, once per slot, and nothing of its runs', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'deadline-hook', kind: 'webhook', url: `${receiver.url}/paused`, secret: SECRET });
    const dagId = 'deadline-paused';
    const rule = await f.store.createNotificationRule({ channelId: channel.id, dagId, event: 'deadline_missed', afterSeconds: 1 });
    await f.store.putDag(scheduled(dagId), SHARDS);
    await f.store.setPaused(parseDagId(dagId), true);
    const firstSlotMs = (await f.store.getDag(parseDagId(dagId))).nextRunAt!.getTime();

    await eventually('three missed slots told', async () => countsOn('/paused').size >= 3, 30_000);
    await f.store.deleteNotificationRule(rule.id);
    // Time for a repeat by the other scheduler or a later check to show up before counting.
    await sleep(2_000);
    const counts = countsOn('/paused');
    expectConsecutiveSlots([...counts.keys()], firstSlotMs);
    for (const [key, n] of counts) expect(n, key).toBe(1);
    for (const r of receiver.received.filter((x) => x.path === '/paused')) {
      expect(r).toMatchObject({ event: 'deadline_missed', signatureOk: true });
      expect(r.body).toMatchObject({ id: r.key, dagId, data: { dagId, afterSeconds: 1, runId: null, state: null } });
      expect(r.key).toBe(`deadline_missed:${dagId}@${String((r.body.data as { scheduledAt: string }).scheduledAt)}:${rule.id}`);
    }
    const rows = await rowsOf(dagId);
    expect(rows.map((n) => n.dedupeKey).sort()).toEqual([...counts.keys()].sort());
    expect(rows.every((n) => n.state === 'delivered' && n.attempts === 1)).toBe(true);
    expect(await f.store.listRuns({ dagId: parseDagId(dagId) })).toEqual([]);
  }, 60_000);

  it('tells a slot whose run is stuck without a worker, naming the run', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'stuck-hook', kind: 'webhook', url: `${receiver.url}/stuck`, secret: SECRET });
    const dagId = 'deadline-stuck';
    const rule = await f.store.createNotificationRule({ channelId: channel.id, dagId, event: 'deadline_missed', afterSeconds: 1 });
    await f.store.putDag(scheduled(dagId), SHARDS);
    const told = await eventually('a stuck slot told', async () => receiver.received.find((r) => r.path === '/stuck'), 30_000);
    await f.store.deleteNotificationRule(rule.id);
    const data = told.body.data as { runId: string | null; state: string | null; scheduledAt: string };
    const runs = await f.store.listRuns({ dagId: parseDagId(dagId) });
    const run = runs.find((r) => r.scheduledAt.toISOString() === data.scheduledAt);
    expect(run).toBeDefined();
    expect(data.runId).toBe(run!.id);
    expect(['queued', 'running']).toContain(data.state);
  }, 60_000);

  it('tells a missed slot once when its leader is killed in the middle of delivering it', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'held-deadline', kind: 'webhook', url: `${receiver.url}/held`, secret: SECRET });
    const dagId = 'deadline-held';
    let release: (status: number) => void = () => undefined;
    const held = new Promise<number>((resolve) => (release = resolve));
    receiver.answer = (r) => (r.path === '/held' && receiver.received.filter((x) => x.path === '/held').length === 1 ? held : 200);
    try {
      const rule = await f.store.createNotificationRule({ channelId: channel.id, dagId, event: 'deadline_missed', afterSeconds: 1 });
      await f.store.putDag(scheduled(dagId), SHARDS);
      await f.store.setPaused(parseDagId(dagId), true);
      const dag = await f.store.getDag(parseDagId(dagId));
      const first = await eventually('the first delivery in flight', async () => receiver.received.find((r) => r.path === '/held'), 30_000);
      const leader = (await f.store.listShards()).find((s) => s.shard === dag.shard)!.holder!;
      f.cluster.signal(leader, 'SIGKILL');
      // The next leader looks back over the slots its predecessor checked: the same keys, no new rows.
      await eventually('the next leader to deliver it', async () => (await rowsOf(dagId)).find((n) => n.dedupeKey === first.key && n.state === 'delivered'), 30_000);
      release(200);
      await eventually('a later slot told by the next leader', async () => countsOn('/held').size >= 2, 30_000);
      await f.store.deleteNotificationRule(rule.id);
      await sleep(2_000);

      // At least once to the receiver for the held key (the killed leader's request and the
      // next leader's repeat, with the same key to drop it by); once in the store; every
      // other slot delivered once.
      const counts = countsOn('/held');
      expect(counts.get(first.key)).toBeGreaterThanOrEqual(2);
      for (const [key, n] of counts) if (key !== first.key) expect(n, key).toBe(1);
      expectConsecutiveSlots([...counts.keys()], dag.nextRunAt!.getTime());
      const rows = await rowsOf(dagId);
      expect(rows.map((n) => n.dedupeKey).sort()).toEqual([...counts.keys()].sort());
      const newLeader = (await f.store.listShards()).find((s) => s.shard === dag.shard)!;
      expect(newLeader.holder).not.toBe(leader);
      expect(rows.find((n) => n.dedupeKey === first.key)).toMatchObject({ state: 'delivered', claimedEpoch: newLeader.epoch });
    } finally {
      release(200);
      receiver.answer = () => 200;
    }
  }, 90_000);
});
