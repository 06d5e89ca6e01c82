import { type Timers } from '@fenceline/core';
import { SchedulerNode, type NodeConfig } from '@fenceline/core/engine';
import { afterEach } from 'vitest';
import { memoryStore, type MemoryStore } from '../src/store/memory-store';

/** Real timers: these tests run a node in real time over a memory store, without the simulation. */
export const realTimers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};

const nodes: SchedulerNode[] = [];
afterEach(async () => {
  for (const node of nodes.splice(0)) await node.stop();
});

/** A started node leading the one shard of a fresh memory store, stopped after the test. */
export async function leadingNode(config: Partial<NodeConfig> = {}): Promise<{ store: MemoryStore; node: SchedulerNode }> {
  const store = memoryStore({ nowMs: () => Date.now() });
  await store.initCluster(1);
  const node = new SchedulerNode({
    nodeId: 'n1',
    store,
    clock: { nowMs: () => Date.now() },
    timers: realTimers,
    config: { shardCount: 1, tickIntervalMs: 20, shardLeaseTtlMs: 2_000, shardRenewIntervalMs: 500, reconcileIntervalMs: 60_000, ...config },
  });
  nodes.push(node);
  await node.start();
  return { store, node };
}
