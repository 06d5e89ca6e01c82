import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../src/scenario/config';
import { checkScenario } from '../src/scenario/check';
import { runWorld } from '../src/world/world';
import type { ScenarioFile } from '../src/scenario/run';

const MINUTE_MS = 60_000;

/**
 * Twenty five-minute DAGs, each backfilled over the three hours before minute 5 while its
 * own schedule runs on, with leaders crashing and schedulers pausing through the fault
 * phase. The checker judges every write: a second run of a slot would break I4, a step of
 * a deposed leader I8.
 */
function backfilled(seed: number): ScenarioFile {
  return {
    name: 'backfill-under-faults',
    headline: 'swarm',
    seed,
    faultPhaseMs: 30 * MINUTE_MS,
    livenessMs: 20 * MINUTE_MS,
    cluster: { nodes: 3, shardCount: 4, capFraction: 0.3 },
    workers: { count: 40, slots: 2, pollWaitMs: 25_000 },
    load: [
      {
        name: 'filled',
        count: 20,
        tasks: 2,
        shape: 'chain',
        durationMs: 20_000,
        everyMs: 5 * MINUTE_MS,
        retries: 2,
        maxActiveRuns: 3,
        backfill: { atMs: 5 * MINUTE_MS, spanMs: 180 * MINUTE_MS, maxActiveRuns: 4 },
      },
    ],
    faults: {
      tickMs: 10_000,
      leaderCrash: { probability: 0.08, minMs: 20_000, maxMs: 60_000 },
      schedulerPause: { probability: 0.05, minMs: 5_000, maxMs: 30_000 },
    },
  };
}

describe('Simulation: backfills under leader crashes', () => {
  for (const seed of [1, 2]) {
    it(`makes one run per slot and finishes every backfill (--seed ${seed})`, async () => {
      const world = await runWorld(resolveScenario(backfilled(seed)));
      expect(world.violations, `replay with --seed ${seed}`).toEqual([]);
      expect(world.outcome).toBe('ok');
      expect(world.faults.some((f) => f.kind === 'scheduler-crash')).toBe(true);
      const backfills = await world.store.listBackfills({ limit: 100 });
      expect(backfills).toHaveLength(20);
      for (const b of backfills) {
        expect(b).toMatchObject({ state: 'done', totalSlots: 36, activeRuns: 0 });
        expect(b.createdRuns + b.skippedSlots).toBe(36);
        // The slot of the first five minutes was the schedule's.
        expect(b.skippedSlots).toBeGreaterThanOrEqual(1);
        const runs = [...world.store.allRuns()].filter((r) => r.dagId === b.dagId && r.scheduledAtMs >= b.fromAt.getTime() && r.scheduledAtMs < b.toAt.getTime());
        expect(runs).toHaveLength(36);
        expect(runs.every((r) => r.state === 'succeeded')).toBe(true);
      }
    });
  }

  it('refuses a backfill on a group without a schedule', () => {
    const file = backfilled(1);
    const config = resolveScenario({ ...file, load: [{ ...file.load![0]!, everyMs: undefined, triggerAtMs: 0 }] });
    expect(() => checkScenario(config)).toThrow(/backfill/);
  });
});
