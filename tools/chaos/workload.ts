import type { DagSpecInput } from '@fenceline/core';

/**
 * The soak's workload: short interval DAGs (so every due slot can be checked), a wide
 * fan-out that presses against the fair-share cap, and a DAG whose task fails on its
 * first attempt, and two DAGs whose jobs make an effect outside the scheduler, one through
 * the effects helpers and one without. Generous retries, so killed and paused workers cost
 * retries, not runs.
 */
export function chaosDags(random: () => number): { scheduled: DagSpecInput[]; fanout: DagSpecInput; flaky: DagSpecInput; effects: DagSpecInput[] } {
  const scheduled: DagSpecInput[] = [];
  for (let i = 0; i < 6; i++) {
    const ms = () => 200 + Math.floor(random() * 600);
    scheduled.push({
      id: `chaos-chain-${i}`,
      schedule: { kind: 'interval', everyMs: 3000 },
      catchup: { policy: 'all', windowMs: 60 * 60 * 1000 },
      maxActiveRuns: 3,
      tasks: [
        { id: 'a', type: 'sleep', config: { durationMs: ms() }, retries: 8, retryBackoffMs: 200, retryBackoffMaxMs: 2000 },
        { id: 'b', type: 'sleep', config: { durationMs: ms() }, dependsOn: ['a'], retries: 8, retryBackoffMs: 200, retryBackoffMaxMs: 2000 },
        { id: 'c', type: 'sleep', config: { durationMs: ms() }, dependsOn: ['b'], retries: 8, retryBackoffMs: 200, retryBackoffMaxMs: 2000 },
      ],
    });
  }
  const parts = Array.from({ length: 40 }, (_, i) => ({ id: `part-${i}`, type: 'sleep', config: { durationMs: 1500 }, dependsOn: ['split'], retries: 8, retryBackoffMs: 200 }));
  const fanout: DagSpecInput = {
    id: 'chaos-fanout',
    maxActiveRuns: 2,
    tasks: [{ id: 'split', type: 'noop', retries: 8 }, ...parts, { id: 'merge', type: 'noop', dependsOn: parts.map((p) => p.id), retries: 8 }],
  };
  const flaky: DagSpecInput = {
    id: 'chaos-flaky',
    maxActiveRuns: 3,
    tasks: [{ id: 'flaky', type: 'flaky', config: { succeedOnAttempt: 2 }, retries: 8, retryBackoffMs: 300 }],
  };
  // The same effects with and without @fenceline/effects (tools/chaos/effects/tasks.ts):
  // each job works past a lease's worth of a pause's start, then writes its effect.
  const effectTasks = (type: string) =>
    Array.from({ length: 6 }, (_, i) => ({
      id: `pay-${i}`,
      type,
      config: { workMs: 1200 + Math.floor(random() * 1200) },
      retries: 8,
      retryBackoffMs: 200,
      retryBackoffMaxMs: 2000,
    }));
  const effects: DagSpecInput[] = [
    { id: 'chaos-effects', maxActiveRuns: 1, tasks: effectTasks('effect-guarded') },
    { id: 'chaos-effects-naive', maxActiveRuns: 1, tasks: effectTasks('effect-naive') },
  ];
  return { scheduled, fanout, flaky, effects };
}
