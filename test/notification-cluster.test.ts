import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForHttp, sleep } from '../tools/start/cluster';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';
import { Receiver } from './support/webhook-receiver';

const SECRET = 'cluster-test-secret';

/** The worker live window and the check interval the cluster runs with: the alert's bound is built from them. */
const LIVE_WINDOW_MS = 4_000;
const CHECK_MS = 500;
/**
 * What a loaded machine adds to the bound: the node's seeing the hang-up, one check's two
 * statements and the delivery's request. Far less than a second live window, which is
 * what a last_seen refreshed after the worker died would add.
 */
const SLACK_MS = 1_500;

/**
 * Cluster events from real processes: a pool whose last worker is killed, and shards whose
 * leader is killed while the only other scheduler may lead shard 0 alone, so the others
 * stay leaderless while it watches them. Short worker windows and checks every half second
 * make both take seconds.
 */
describe('notifications: cluster events told by a real cluster to a local receiver', () => {
  let f: Fixture;
  const receiver = new Receiver(SECRET);

  beforeAll(async () => {
    await receiver.start();
    f = await startFixture({
      schedulers: 1,
      workers: 0,
      env: {
        FENCELINE_NOTIFY_CHECK_INTERVAL_MS: String(CHECK_MS),
        FENCELINE_WORKER_LIVE_WINDOW_MS: String(LIVE_WINDOW_MS),
        FENCELINE_WORKER_HEARTBEAT_INTERVAL_MS: '1000',
        FENCELINE_POLL_WAIT_MS: '1000',
      },
    });
  });
  afterAll(async () => {
    await f?.stop();
    await receiver.stop();
  });

  const keysOn = (path: string): string[] => receiver.received.filter((r) => r.path === path).map((r) => r.key);

  it('tells once that a pool lost its last live worker, within the live window plus after plus a check of the kill', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'pool-hook', kind: 'webhook', url: `${receiver.url}/pool`, secret: SECRET });
    // The worker first: a rule naming a pool no worker has served tells that at once (the next test).
    f.cluster.startWorker(0, { FENCELINE_WORKER_ID: 'gpu-1', FENCELINE_WORKER_POOL: 'gpu' });
    await eventually('the gpu worker live', async () => (await f.store.listWorkers(2_000)).some((w) => w.id === 'gpu-1'), 30_000);
    const rule = await f.store.createNotificationRule({ channelId: channel.id, event: 'pool_no_worker', afterSeconds: 2, pool: 'gpu' });
    // While it lives, nothing is told.
    await sleep(3_000);
    expect(keysOn('/pool')).toEqual([]);

    const killedAtMs = Date.now();
    f.cluster.signal('worker-1', 'SIGKILL');
    const told = await eventually('the empty pool told', async () => receiver.received.find((r) => r.path === '/pool'), 30_000);
    // Never before the worker was silent for the window plus the rule's 2 s (it may have been heard last a moment
    // before the kill, between two polls), and within a check (and the slack) of it.
    const delayMs = told.atMs - killedAtMs;
    expect(delayMs).toBeGreaterThanOrEqual(LIVE_WINDOW_MS + 2_000 - 250);
    expect(delayMs).toBeLessThanOrEqual(LIVE_WINDOW_MS + 2_000 + CHECK_MS + SLACK_MS);
    await sleep(3_000);
    expect(keysOn('/pool')).toEqual([told.key]);
    // last_seen is when the worker was last heard, at the kill, not a heartbeat after it.
    const lastSeen = (await f.store.listWorkers(3_600_000)).find((w) => w.id === 'gpu-1')!.lastSeen;
    expect(Math.abs(lastSeen.getTime() - killedAtMs)).toBeLessThanOrEqual(SLACK_MS);
    expect(told.key).toBe(`pool_no_worker:pool:gpu:${lastSeen.toISOString()}:${rule.id}`);
    expect(told).toMatchObject({ event: 'pool_no_worker', signatureOk: true, body: { dagId: null, data: { pool: 'gpu', afterSeconds: 2 } } });
    const rows = (await f.store.listNotifications({ limit: 1000 })).filter((n) => n.ruleId === rule.id);
    expect(rows).toEqual([expect.objectContaining({ dedupeKey: told.key, state: 'delivered', attempts: 1, dagId: null })]);
  }, 90_000);

  it('tells of a pool a waiting task names though no worker of it was ever started', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'never-hook', kind: 'webhook', url: `${receiver.url}/never`, secret: SECRET });
    const rule = await f.store.createNotificationRule({ channelId: channel.id, event: 'pool_no_worker', afterSeconds: 1 });
    await f.store.putDag({ id: 'needs-tpu', tasks: [{ id: 'fit', type: 'noop', pool: 'tpu' }] }, Number(FAST_ENV.FENCELINE_SHARDS));
    await f.store.triggerRun('needs-tpu' as never);
    const told = await eventually('the unserved pool told', async () => receiver.received.find((r) => r.path === '/never' && r.key.startsWith('pool_no_worker:pool:tpu:')), 30_000);
    expect(told).toMatchObject({ key: `pool_no_worker:pool:tpu:none:${rule.id}`, signatureOk: true, body: { data: { pool: 'tpu', lastSeen: null, afterSeconds: 1 } } });
    await f.store.deleteNotificationChannel(channel.id);
  }, 60_000);

  it('tells once per shard left without a leader for longer than the bound, watched by the node that leads shard 0', async () => {
    const channel = await f.store.createNotificationChannel({ name: 'shard-hook', kind: 'webhook', url: `${receiver.url}/shards`, secret: SECRET });
    const rule = await f.store.createNotificationRule({ channelId: channel.id, event: 'shard_leaderless', afterSeconds: 2 });
    const port = f.cluster.opts.basePort + 1;
    f.cluster.spawn({
      name: 'scheduler-2',
      kind: 'scheduler',
      env: { ...f.cluster.commonEnv(), FENCELINE_NODE_ID: 'scheduler-2', FENCELINE_SCHEDULER_PORT: String(port), FENCELINE_LEAD_SHARDS: '0' },
    });
    await waitForHttp(`http://127.0.0.1:${port}/health`, 60_000);
    const before = await f.store.listShards();
    expect(before.every((s) => s.holder === 'scheduler-1')).toBe(true);

    f.cluster.signal('scheduler-1', 'SIGKILL');
    const expected = before.filter((s) => s.shard !== 0).map((s) => `shard_leaderless:shard:${s.shard}:epoch:${s.epoch}:${rule.id}`);
    await eventually('every leaderless shard told', async () => expected.every((k) => keysOn('/shards').includes(k)), 30_000);
    await sleep(3_000);
    // One each, and none for shard 0, which scheduler-2 took within a tick of the lease running out.
    expect(keysOn('/shards').sort()).toEqual([...expected].sort());
    const after = await f.store.listShards();
    expect(after.find((s) => s.shard === 0)!.holder).toBe('scheduler-2');
    expect(after.filter((s) => s.shard !== 0).every((s) => s.holder === null || s.expiresAt!.getTime() < Date.now())).toBe(true);
    const rows = (await f.store.listNotifications({ limit: 1000 })).filter((n) => n.ruleId === rule.id);
    expect(rows.map((n) => [n.dedupeKey, n.state, n.shard]).sort()).toEqual(expected.map((k) => [k, 'delivered', 0]).sort());
    const first = receiver.received.find((r) => r.key === expected[0])!;
    expect(first).toMatchObject({ event: 'shard_leaderless', signatureOk: true, body: { data: { shard: before.find((s) => s.shard !== 0)!.shard, afterSeconds: 2 } } });
  }, 90_000);
});
