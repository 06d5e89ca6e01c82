import { describe, expect, it } from 'vitest';
import { type WorkerId } from '@fenceline/core';
import { WorkerPool, type PollItem } from '@fenceline/core/engine';
import { SimProcess } from '../src/engine/process';
import { Rng } from '../src/engine/random';
import { Simulation } from '../src/engine/simulation';
import { callLabels, holdOver, Link, type HangUp } from '../src/world/link';

const WORKER = 'w-1' as WorkerId;
const LATENCY_MS = 2;
const CYCLE_MS = 25_000;

/** What happens to the worker or its poll between the poll being served and the crash. */
type Disturbance = 'none' | 'free-slots-changed' | 'worker-paused' | 'node-paused';

/**
 * A worker's poll held open on a node whose production WorkerPool serves it, the node's
 * handler awaiting once before it waits as the session check makes it do. Returns the
 * pool, so a test can ask whether the node still lists the worker as waiting: that list is
 * what a lending round counts free slots from.
 */
function world(): { sim: Simulation; worker: SimProcess; node: SimProcess; pool: WorkerPool; poll: () => ReturnType<typeof holdOver<PollItem[]>> } {
  const sim = new Simulation(0, 50);
  const worker = new SimProcess(sim, 'w-1');
  const node = new SimProcess(sim, 'node-0');
  const link = new Link(sim, 'w-1~node-0', new Rng(1, 'link'), { latencyMs: LATENCY_MS, jitterMs: 0 });
  const pool = new WorkerPool(node.clock, node.timers, { liveWindowMs: 60_000, outboxHoldMs: 1_000, onUnclaimed: () => undefined });
  const op = async (hangUp: HangUp): Promise<PollItem[]> => {
    await Promise.resolve();
    return pool.wait({ workerId: WORKER, slots: 2, freeSlots: 2, waitMs: 6 * 60 * 60 * 1000 }, () => undefined, hangUp);
  };
  const poll = () => {
    const held = holdOver(link, worker, node, callLabels('w-1>node-0.poll'), { cycleMs: CYCLE_MS, timeoutMs: 10_000 }, op);
    held.promise.catch(() => undefined);
    return held;
  };
  return { sim, worker, node, pool, poll };
}

describe('a held poll whose worker crashes', () => {
  // Every disturbance that leaves the production client holding its connection open until
  // the node's next empty answer, crossed with the moment of the crash: the node must stop
  // listing the dead worker as waiting once the close has crossed the link, well before the
  // boundary at which its own wait would have ended the poll.
  const disturbances: Disturbance[] = ['none', 'free-slots-changed', 'worker-paused', 'node-paused'];
  for (const disturbance of disturbances) {
    for (const crashAfterMs of [100, 1_000, 20_000]) {
      it(`is dropped by the node one link delay after the crash (${disturbance}, crash ${crashAfterMs} ms after it)`, async () => {
        const { sim, worker, node, pool, poll } = world();
        const held = poll();
        await sim.runUntil(50);
        expect(pool.isWaiting(WORKER)).toBe(true);
        if (disturbance === 'free-slots-changed') held.refresh();
        if (disturbance === 'worker-paused') {
          worker.pause();
          sim.after(50, 'resume', () => worker.resume());
        }
        if (disturbance === 'node-paused') {
          node.pause();
          sim.after(50, 'resume', () => node.resume());
        }
        await sim.runUntil(50 + crashAfterMs);
        expect(pool.isWaiting(WORKER)).toBe(true);
        worker.crash();
        await sim.runUntil(50 + crashAfterMs + LATENCY_MS + 1);
        expect(pool.isWaiting(WORKER)).toBe(false);
        expect(pool.waiting()).toEqual([]);
      });
    }
  }

  it('is dropped when the worker died between sending it and the node serving it', async () => {
    const { sim, worker, pool, poll } = world();
    poll();
    sim.after(1, 'crash', () => worker.crash());
    await sim.runUntil(1 + 2 * LATENCY_MS + 1);
    expect(pool.isWaiting(WORKER)).toBe(false);
    expect(pool.silentMs(WORKER)).toBeGreaterThan(0);
  });

  it('stays open while the worker is only paused, as its socket does', async () => {
    const { sim, worker, pool, poll } = world();
    poll();
    await sim.runUntil(50);
    worker.pause();
    await sim.runUntil(5_000);
    expect(pool.isWaiting(WORKER)).toBe(true);
  });
});
