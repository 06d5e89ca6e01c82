import type { DagSpecInput } from '@fenceline/core';

/** A wide fan-out: one root, `parts` parallel sleeps, one join. With 12 slots and a 30% cap it may hold 3. */
export function fanOut(id: string, parts: number, sleepMs: number): DagSpecInput {
  const names = Array.from({ length: parts }, (_, i) => `part-${String(i).padStart(3, '0')}`);
  return {
    id,
    name: `Fan-out of ${parts}`,
    schedule: { kind: 'manual' },
    tasks: [
      { id: 'split', type: 'noop' },
      ...names.map((n) => ({ id: n, type: 'sleep', config: { durationMs: sleepMs }, dependsOn: ['split'] })),
      { id: 'merge', type: 'noop', dependsOn: names },
    ],
  };
}

/** A short chain, for the DAG that must keep starting while the fan-out sits at its cap. */
export function chain(id: string, sleepMs: number): DagSpecInput {
  return {
    id,
    name: 'Small chain beside the fan-out',
    schedule: { kind: 'manual' },
    tasks: [
      { id: 'extract', type: 'sleep', config: { durationMs: sleepMs } },
      { id: 'transform', type: 'sleep', config: { durationMs: sleepMs }, dependsOn: ['extract'] },
      { id: 'load', type: 'sleep', config: { durationMs: sleepMs }, dependsOn: ['transform'] },
    ],
  };
}
