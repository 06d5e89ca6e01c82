import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'drizzle-orm';
import { parseDagId, parseWorkerId, shardOf } from '@fenceline/core';
import { type NewJob } from '@fenceline/core/store';
import { grantLeases, startRun } from '@fenceline/core/testing';
import { openStore, type SqlStore } from '../src/index';
import { TIMELINE_FENCE_GAP } from '../src/store/lineage';
import { freshDatabase } from './harness';

/**
 * A promoted standby that was behind can lack acknowledged grants and hand their fences
 * out again. The store notices the new PostgreSQL timeline and raises every open fence and
 * every epoch past them. A real promotion is what test/store-failover.test.ts drives; here
 * the record of the timeline is set back by one, as it reads after a promotion.
 */
const adminUrl = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const SHARDS = 4;
let database: { url: string; drop(): Promise<void> };
let store: SqlStore;

beforeAll(async () => {
  database = await freshDatabase(adminUrl);
  store = await openStore({ databaseUrl: database.url, max: 4, applicationName: 'fenceline-test' });
  await store.initCluster(SHARDS);
});
afterAll(async () => {
  await store?.close();
  await database?.drop();
});

const job = (taskId: string, state: 'ready' | 'waiting'): NewJob => ({ taskId, state, maxAttempts: 3, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 });
const view = () => store.contentionView({ nodeId: 'n1', liveWindowMs: 10_000, serving: true });

describe('store lineage: a new PostgreSQL timeline', () => {
  it('raises every open fence and every epoch once, refuses the old holder, and says so in the event log', async () => {
    await view();
    const dagId = 'lineage-dag';
    const acquired = (await store.acquireShard({ shard: shardOf(dagId, SHARDS), nodeId: 'n1', ttlMs: 60_000 }))!;
    await store.putDag(
      {
        id: dagId,
        tasks: [
          { id: 'a', type: 'noop' },
          { id: 'b', type: 'noop', dependsOn: ['a'] },
        ],
      },
      SHARDS,
    );
    const run = await store.triggerRun(parseDagId(dagId));
    const [ready, waiting] = await startRun(store, acquired.token, run.id, [job('a', 'ready'), job('b', 'waiting')]);
    const [lease] = await grantLeases(store, acquired.token, [{ jobId: ready!.id, workerId: parseWorkerId('w1') }], 60_000);
    expect(lease!.fence).toBe(1);

    // Nothing changes while the timeline is the one recorded.
    await view();
    expect((await store.getJob(ready!.id)).fence).toBe(1);

    await store.db.execute(sql`update store_lineage set timeline = timeline - 1`);
    await Promise.all([view(), view()]);
    expect((await store.getJob(ready!.id)).fence).toBe(1 + TIMELINE_FENCE_GAP);
    expect((await store.getJob(waiting!.id)).fence).toBe(waiting!.fence + TIMELINE_FENCE_GAP);
    // The holder of fence 1, granted before the promotion, is refused like any stale holder.
    const [renewal] = await store.renewLeases([{ jobId: ready!.id, fence: 1, workerId: parseWorkerId('w1'), session: null }], 60_000);
    expect(renewal!.ok).toBe(false);
    // The leader's token is of an epoch that no longer is.
    await expect(store.renewShard(acquired.token, 60_000)).rejects.toMatchObject({ code: 'DEPOSED_LEADER' });
    const events = await store.listEvents({ limit: 50 });
    expect(events.filter((e) => e.type === 'store:timeline-fenced')).toHaveLength(1);

    // Seen again, the same timeline raises nothing more.
    await view();
    expect((await store.getJob(ready!.id)).fence).toBe(1 + TIMELINE_FENCE_GAP);
  });
});
