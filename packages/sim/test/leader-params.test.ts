import { describe, expect, it } from 'vitest';
import { parseDagId, type RunRow, type Timers } from '@fenceline/core';
import { ShardLeader } from '@fenceline/core/engine';
import { type LeaderToken } from '@fenceline/core/store';
import { memoryStore, type MemoryStore } from '../src/store/memory-store';

const timers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};
const nowMs = 1_700_000_000_000;

function leaderOf(store: MemoryStore, token: LeaderToken, clock: () => number = () => nowMs): ShardLeader {
  return new ShardLeader({
    store,
    clock: { nowMs: clock },
    timers,
    token,
    emit: () => undefined,
    kick: () => undefined,
    onDeposed: () => undefined,
    reconcileAfterMs: 1_000,
  });
}

describe('a shard leader handing out run params', () => {
  it('hands each lease its run params and task dependencies, and a new leader after a failover the same ones', async () => {
    const store = memoryStore({ nowMs: () => nowMs });
    await store.initCluster(1);
    await store.putDag(
      {
        id: 'report',
        params: { region: { type: 'string', default: 'eu' }, batch: { type: 'integer', required: true } },
        tasks: [
          { id: 'extract', type: 'noop' },
          { id: 'load', type: 'noop', dependsOn: ['extract'] },
        ],
      },
      1,
    );
    const first = (await store.acquireShard({ shard: 0, nodeId: 'node-1', ttlMs: 60_000 }))!.token;
    const run = await store.triggerRun(parseDagId('report'), { params: { batch: 5 } });
    const before = leaderOf(store, first);
    await before.load();
    expect(before.paramsOf(run.id)).toEqual({ batch: 5, region: 'eu' });
    expect(before.taskOf(run.id, 'load')?.dependsOn).toEqual(['extract']);

    // node-1 gives the shard up; node-2 takes it under a new epoch and loads it from the store.
    await store.releaseShard(first);
    const second = (await store.acquireShard({ shard: 0, nodeId: 'node-2', ttlMs: 60_000 }))!.token;
    expect(second.epoch).toBeGreaterThan(first.epoch);
    const after = leaderOf(store, second);
    await after.load();
    expect(after.paramsOf(run.id)).toEqual({ batch: 5, region: 'eu' });
    expect(after.paramsOf('999')).toEqual({});
  });

  it("hands a run stored without params (a backfill's) the defaults of the version it pinned", async () => {
    let clockMs = nowMs;
    const store = memoryStore({ nowMs: () => clockMs });
    await store.initCluster(1);
    await store.putDag(
      { id: 'nightly', schedule: { kind: 'interval', everyMs: 60_000 }, params: { region: { type: 'string', default: 'eu' } }, tasks: [{ id: 'a', type: 'noop' }] },
      1,
    );
    const token = (await store.acquireShard({ shard: 0, nodeId: 'node-1', ttlMs: 600_000 }))!.token;
    const slot = (await store.getDag(parseDagId('nightly'))).nextRunAt!;
    clockMs = slot.getTime() + 1_000;
    // The run is written as a backfill writes its runs: with no params of its own.
    const [created] = (await store.createScheduledRunsAcross([{ token, items: [{ dagId: 'nightly', expectedNextRunAt: slot, slots: [slot], nextRunAt: null }] }]))[0] as RunRow[][];
    expect(created?.[0]?.params).toEqual({});
    const leader = leaderOf(store, token, () => clockMs);
    await leader.load();
    expect(leader.paramsOf(created![0]!.id)).toEqual({ region: 'eu' });
  });
});
