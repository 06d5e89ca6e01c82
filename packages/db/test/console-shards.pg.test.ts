import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { shardsSnapshot } from '../src/console';
import { openStore, type SqlStore } from '../src/index';
import { freshDatabase } from './harness';

/**
 * The console's shard page: which scheduler nodes are alive (a node that serves workers
 * but leads nothing yet is one, found by its stamp in scheduler_nodes), which of them
 * stand by for each shard, and why each shard last changed hands.
 */
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
let database: { url: string; drop(): Promise<void> };
let store: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  store = await openStore({ databaseUrl: database.url, max: 2, applicationName: 'fenceline-test' });
  await store.initCluster(2);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

describe('console: shards snapshot', () => {
  it('lists a serving node that leads nothing as alive and as a standby, and tells a sharing release from a stop', async () => {
    const a = await store.acquireShard({ shard: 0, nodeId: 'node-a', ttlMs: 60_000 });
    await store.contentionView({ nodeId: 'node-b', liveWindowMs: 3_000, serving: true });
    await store.appendEvents([
      { type: 'leader:released', shard: 1, epoch: 1, nodeId: 'node-a', data: { reason: 'share' } },
      { type: 'leader:released', shard: 1, epoch: 2, nodeId: 'node-c' },
    ]);
    const s = await shardsSnapshot(store.db, { liveWindowMs: 60_000 });
    expect(s.nodes).toEqual(['node-a', 'node-b']);
    expect(s.shards[0]).toMatchObject({ shard: 0, holder: 'node-a', led: true, epoch: a!.token.epoch, standbys: ['node-b'] });
    expect(s.shards[1]).toMatchObject({ shard: 1, led: false });
    const released = s.history.filter((h) => h.type === 'leader:released');
    expect(released.map((h) => [h.nodeId, h.reason])).toEqual([
      ['node-c', 'stop'],
      ['node-a', 'share'],
    ]);
    // A node that leaves is no longer listed once nothing else shows it alive.
    await store.leaveCluster('node-b');
    expect((await shardsSnapshot(store.db, { liveWindowMs: 60_000 })).nodes).toEqual(['node-a']);
  });

  it("shows each node's store as the node last reported it: an outage or a write stall on, or the last one's length", async () => {
    await store.contentionView({ nodeId: 'node-d', liveWindowMs: 3_000, serving: true });
    const at = (s: number) => new Date(Date.now() - s * 1000);
    await store.appendEvents([
      { type: 'store:unavailable', nodeId: 'node-d', at: at(30), data: { call: 'completeJobs', error: 'the database is unavailable (ECONNRESET)' } },
      { type: 'store:available', nodeId: 'node-d', at: at(20), data: { outageMs: 9_400, failedCalls: 70 } },
      { type: 'store:writes-stalled', nodeId: 'node-d', at: at(10), data: { stalledMs: 20_100, resultsWaiting: 4 } },
      { type: 'store:unavailable', nodeId: 'node-e', at: at(5), data: { call: 'renewShard', error: 'the database is unavailable (57P03)' } },
    ]);
    const health = (await shardsSnapshot(store.db, { liveWindowMs: 60_000 })).nodeHealth;
    const d = health.find((h) => h.nodeId === 'node-d')!;
    expect(d).toMatchObject({ store: 'available', lastOutageMs: 9_400, writes: 'stalled', lastStallMs: null });
    expect(d.lastStampedAt).not.toBeNull();
    // A node that reported an outage and nothing since is shown in it, though it no longer stamps itself alive.
    expect(health.find((h) => h.nodeId === 'node-e')).toMatchObject({ store: 'unavailable', writes: 'moving', lastStampedAt: null });
    await store.appendEvents([{ type: 'store:writes-moving', nodeId: 'node-d', data: { stalledMs: 31_000 } }]);
    expect((await shardsSnapshot(store.db, { liveWindowMs: 60_000 })).nodeHealth.find((h) => h.nodeId === 'node-d')).toMatchObject({ writes: 'moving', lastStallMs: 31_000 });
  });
});
