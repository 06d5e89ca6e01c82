import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../src/scenario/config';
import { runWorld } from '../src/world/world';
import type { ScenarioFile } from '../src/scenario/run';

/**
 * 60 DAGs with one-minute schedules, half sharing their slots and half spread over the
 * minute, on a healthy cluster. With the tick's look-ahead a run is created on its slot;
 * without it, at the first tick after the slot (ticks are a second apart). Due DAGs are
 * read 10 a page, so a shared slot spans pages of one tick's read.
 */
function minutely(tickLookaheadMs: number): ScenarioFile {
  return {
    name: 'on-time',
    headline: 'swarm',
    seed: 7,
    faultPhaseMs: 12 * 60_000,
    livenessMs: 2 * 60_000,
    cluster: { nodes: 2, shardCount: 8, capFraction: 0.3, node: { tickLookaheadMs, dueBatch: 10 } },
    workers: { count: 40, slots: 2, pollWaitMs: 25_000 },
    load: [
      { name: 'aligned', count: 30, tasks: 1, shape: 'independent', durationMs: 5_000, everyMs: 60_000, phase: 'aligned' },
      { name: 'spread', count: 30, tasks: 1, shape: 'independent', durationMs: 5_000, everyMs: 60_000, phase: 'spread' },
    ],
  };
}

/** How late (store time) each scheduled run was created after its slot, in ms. */
async function lateness(tickLookaheadMs: number): Promise<number[]> {
  const world = await runWorld(resolveScenario(minutely(tickLookaheadMs)));
  expect(world.outcome).toBe('ok');
  // The nodes count every scheduled run they created, on time or catching up.
  const scheduled = [...world.store.allRuns()].filter((r) => r.trigger === 'schedule').length;
  expect(world.nodeMetrics.tick_runs_created_total).toBe(scheduled);
  // The first minute is the cluster electing its leaders; slots after it are steady state.
  return [...world.store.allRuns()].filter((r) => r.trigger === 'schedule' && r.scheduledAtMs >= world.startMs + 60_000).map((r) => r.createdAtMs - r.scheduledAtMs);
}

describe('Simulation: runs on their slot', () => {
  it('with the look-ahead every run is created at or just after its slot, never before it', async () => {
    const ahead = await lateness(2_000);
    expect(ahead.length).toBeGreaterThan(500);
    expect(Math.min(...ahead)).toBeGreaterThanOrEqual(0);
    // The store link's latency and jitter are a few milliseconds; a tick is 1,000.
    expect(Math.max(...ahead)).toBeLessThan(100);
  });

  it('without it a run waits for the next tick: up to a second late', async () => {
    const ticked = await lateness(0);
    expect(ticked.length).toBeGreaterThan(500);
    expect(Math.min(...ticked)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...ticked)).toBeGreaterThan(300);
  });
});
