import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

/**
 * SIGTERM is how an operator (or `npm start` on Ctrl-C, or a process manager) stops a
 * scheduler. It must give its shards up at once, so a standby takes them without waiting
 * out the shard lease, and write the events it still holds before it exits.
 */
describe('cluster: a scheduler stopped with SIGTERM', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 0 });
  });
  afterAll(async () => f?.stop());

  it('releases every shard it leads, writes its last events and exits 0', async () => {
    await eventually('the node to lead every shard', async () => {
      const shards = await f.store.listShards();
      return shards.length === SHARDS && shards.every((s) => s.holder === 'scheduler-1') ? shards : null;
    }, 20_000);
    const proc = f.cluster.procs.get('scheduler-1')!;
    f.cluster.signal('scheduler-1', 'SIGTERM');
    const code = await Promise.race([proc.exited, new Promise<string>((resolve) => setTimeout(() => resolve('still running'), 10_000))]);
    expect(code).toBe(0);
    const shards = await f.store.listShards();
    expect(shards.map((s) => s.holder)).toEqual(Array.from({ length: SHARDS }, () => null));
    const released = await f.store.listEvents({ type: 'leader:released', limit: 100 });
    expect(released.map((e) => e.shard).sort()).toEqual(shards.map((s) => s.shard).sort());
    for (const e of released) expect(e.nodeId).toBe('scheduler-1');
  });
});
