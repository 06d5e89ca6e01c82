import { describe, expect, it } from 'vitest';
import { runScenario, type ScenarioFile } from '../src/scenario/run';

/** A cluster with nothing to do: one manual DAG that is never triggered, and `workers` idle workers. */
function idle(workers: number, minutes: number): ScenarioFile {
  return {
    name: 'idle',
    headline: 'swarm',
    faultPhaseMs: minutes * 60_000,
    livenessMs: 0,
    cluster: { nodes: 3, shardCount: 16, capFraction: 0.3 },
    workers: { count: workers, slots: 1, pollWaitMs: 25_000 },
    load: [{ name: 'quiet', count: 1, tasks: 1, shape: 'independent', durationMs: 60_000 }],
  };
}

async function events(workers: number, minutes: number): Promise<number> {
  const report = await runScenario(idle(workers, minutes));
  expect(report.outcome).toBe('ok');
  return report.runs[0]!.events;
}

describe('Simulation: idle workers', () => {
  it('cost no events once they wait: ten times the fleet adds nothing to an idle half hour', async () => {
    // Each fleet registers and polls within its first minutes; what the next 30 minutes
    // add is the nodes' own loops, the same for 100 workers as for 1,000. Production
    // workers would re-poll every node every 25 s: 1,000 x 3 x 72 polls in that time.
    const small = (await events(100, 40)) - (await events(100, 10));
    const large = (await events(1_000, 40)) - (await events(1_000, 10));
    expect(large).toBeLessThan(small * 1.1);
  });
});
