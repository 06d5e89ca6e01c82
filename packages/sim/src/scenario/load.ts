import type { DagSpecInput } from '@fenceline/core';
import type { Rng } from '../engine/random';
import type { DagGroup, ScenarioConfig } from './config';

/** The tasks of one generated DAG, in the group's shape. */
function tasksOf(group: DagGroup, tasks: number): DagSpecInput['tasks'] {
  const task = (k: number, dependsOn: string[]) => ({
    id: `t${k}`,
    type: 'sleep',
    config: { durationMs: group.durationMs },
    dependsOn,
    retries: group.retries ?? 2,
    retryBackoffMs: 5_000,
    ...(group.timeoutMs !== undefined ? { timeoutMs: group.timeoutMs } : {}),
  });
  const out = [];
  for (let k = 0; k < tasks; k++) {
    switch (group.shape) {
      case 'fanout':
      case 'independent':
        out.push(task(k, []));
        break;
      case 'chain':
        out.push(task(k, k === 0 ? [] : [`t${k - 1}`]));
        break;
      case 'diamond': {
        const last = tasks - 1;
        out.push(task(k, k === 0 ? [] : k === last && tasks > 1 ? Array.from({ length: Math.max(0, last - 1) }, (_, j) => `t${j + 1}`).concat(last === 1 ? ['t0'] : []) : ['t0']));
        break;
      }
    }
  }
  return out;
}

/**
 * The DAGs of one group. Scheduled DAGs get their own phase (an interval anchor drawn
 * from the seed), so a hundred thousand DAGs every few hours spread over the interval
 * instead of all firing on the same second.
 */
export function* generateGroup(group: DagGroup, config: ScenarioConfig, rng: Rng): Generator<DagSpecInput> {
  const startMs = Date.parse(config.startAt);
  const count = scaledCount(group.count, config.scale);
  const tasks = group.shape === 'fanout' ? scaledCount(group.tasks, config.scale) : group.tasks;
  for (let i = 0; i < count; i++) {
    const schedule = group.everyMs
      ? {
          kind: 'interval' as const,
          everyMs: group.everyMs,
          anchor: new Date(group.phase === 'aligned' ? startMs : startMs + Math.floor(rng.next() * group.everyMs)).toISOString(),
        }
      : { kind: 'manual' as const };
    yield {
      id: `${group.name}-${i}`,
      schedule,
      catchup: { policy: 'latest' },
      maxActiveRuns: group.maxActiveRuns ?? 1,
      ...(group.capFraction !== undefined ? { capFraction: group.capFraction } : {}),
      tasks: tasksOf(group, tasks),
    };
  }
}

/** A count at the run's scale: never below one unless the scenario asked for none. */
export function scaledCount(count: number, scale: number): number {
  return count <= 0 ? 0 : Math.max(1, Math.round(count * scale));
}
