import { describe, expect, it } from 'vitest';
import { type WorkerId } from '@fenceline/core';
import { SchedulerNode, type DeliveryRequest } from '@fenceline/core/engine';
import { Simulation } from '../src/engine/simulation';
import { memoryStore } from '../src/store/memory-store';

/** The documented bound: a pool is told the live window plus the rule's `after` after its last worker was heard, within one check. */
const LIVE_WINDOW_MS = 15_000;
const AFTER_S = 3;
const CHECK_MS = 1_000;
const START_MS = Date.parse('2026-01-01T00:00:00.000Z');

/**
 * One scheduler node on a memory store, all on a virtual clock, with a `pool_no_worker`
 * rule for the gpu pool and a channel whose deliveries are recorded at the virtual time
 * they are sent. Heartbeats every 5 s, as a cluster whose interval is a third of its window.
 */
async function world() {
  const sim = new Simulation(START_MS);
  const store = memoryStore({ nowMs: () => sim.nowMs });
  const channel = await store.createNotificationChannel({ name: 'c', kind: 'webhook', url: 'http://127.0.0.1:9/hook' });
  const told: { atMs: number; body: { id: string; data: Record<string, unknown> } }[] = [];
  const node = new SchedulerNode({
    nodeId: 'node-1',
    store,
    clock: { nowMs: () => sim.nowMs },
    timers: { after: (delayMs, fn) => sim.after(delayMs, 'node', fn) },
    config: { shardCount: 1, workerLiveWindowMs: LIVE_WINDOW_MS, workerHeartbeatIntervalMs: 5_000, notifyCheckIntervalMs: CHECK_MS, pollWaitMs: 4_000 },
    notify: {
      deliver: async (request: DeliveryRequest) => {
        told.push({ atMs: sim.nowMs, body: JSON.parse(request.body) as (typeof told)[number]['body'] });
        return { status: 200 };
      },
      sign: () => 'unused',
    },
  });
  const started = node.start();
  await sim.runUntil(START_MS + 10);
  await started;

  /** A worker of `pool` that polls the node again as soon as each poll is answered, until it is killed. */
  async function startWorker(id: string, pool = 'gpu'): Promise<{ kill: () => void }> {
    const workerId = id as WorkerId;
    const offer = { pool, labels: [], types: ['noop'] };
    const session = `session-of-${id}`;
    await node.protocol.register({ workerId, session, slots: 1, offer, credentialId: null });
    let alive = true;
    let hangUp: (() => void) | null = null;
    const poll = (): void => {
      if (!alive) return;
      void node.protocol.poll({ workerId, session, slots: 1, freeSlots: 1, offer }, { onCancel: (fn) => (hangUp = fn) }).then(() => {
        if (alive) sim.post(1, 'repoll', poll);
      });
    };
    poll();
    // kill -9: the process and its open poll's connection go at once, which the node sees as a hang-up.
    return {
      kill: () => {
        alive = false;
        hangUp?.();
      },
    };
  }
  return { sim, store, node, told, channelId: channel.id, startWorker };
}

describe('pool_no_worker on a virtual clock', () => {
  it('tells a pool whose last worker was killed within one check of the live window plus after, never before', async () => {
    const w = await world();
    const rule = await w.store.createNotificationRule({ channelId: w.channelId, event: 'pool_no_worker', afterSeconds: AFTER_S, pool: 'gpu' });
    const worker = await w.startWorker('gpu-1');
    // A minute of a live worker polling: nothing is told.
    await w.sim.runUntil(START_MS + 60_000);
    expect(w.told).toEqual([]);
    // Killed between two heartbeats and two checks.
    await w.sim.runUntil(START_MS + 62_345);
    const killedAtMs = w.sim.nowMs;
    worker.kill();
    await w.sim.runUntil(killedAtMs + 60_000);
    expect(w.told).toHaveLength(1);
    const delayMs = w.told[0]!.atMs - killedAtMs;
    expect(delayMs).toBeGreaterThanOrEqual(LIVE_WINDOW_MS + AFTER_S * 1000);
    expect(delayMs).toBeLessThanOrEqual(LIVE_WINDOW_MS + AFTER_S * 1000 + CHECK_MS);
    // The store's last_seen is when the node last heard the worker: the kill, not a heartbeat after it.
    const lastSeen = (await w.store.listWorkers(3_600_000)).find((x) => x.id === 'gpu-1')!.lastSeen;
    expect(lastSeen.getTime()).toBe(killedAtMs);
    expect(w.told[0]!.body).toMatchObject({ id: `pool_no_worker:pool:gpu:${lastSeen.toISOString()}:${rule.id}`, data: { pool: 'gpu', afterSeconds: AFTER_S } });
    await w.node.stop();
  });

  it('tells a pool no worker ever served from when a rule named it', async () => {
    const w = await world();
    await w.sim.runUntil(START_MS + 5_432);
    const namedAtMs = w.sim.nowMs;
    const rule = await w.store.createNotificationRule({ channelId: w.channelId, event: 'pool_no_worker', afterSeconds: AFTER_S, pool: 'gpu' });
    await w.sim.runUntil(namedAtMs + 30_000);
    expect(w.told.map((t) => t.body.id)).toEqual([`pool_no_worker:pool:gpu:none:${rule.id}`]);
    const delayMs = w.told[0]!.atMs - namedAtMs;
    expect(delayMs).toBeGreaterThanOrEqual(AFTER_S * 1000);
    expect(delayMs).toBeLessThanOrEqual(AFTER_S * 1000 + CHECK_MS);
    expect(w.told[0]!.body.data).toMatchObject({ pool: 'gpu', lastSeen: null });
    await w.node.stop();
  });

  it('tells a pool a task names though no worker ever served it, when a rule watches every pool', async () => {
    const w = await world();
    await w.store.createNotificationRule({ channelId: w.channelId, event: 'pool_no_worker', afterSeconds: AFTER_S });
    await w.store.putDag({ id: 'train', tasks: [{ id: 'fit', type: 'noop', pool: 'gpu' }] }, 1);
    // A default-pool worker polls all along; only the gpu pool has none.
    await w.startWorker('cpu-1', 'default');
    await w.sim.runUntil(w.sim.nowMs + 30_000);
    expect(w.told.map((t) => t.body.data.pool)).toEqual(['gpu']);
    await w.node.stop();
  });
});
