import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../src/scenario/config';
import { runWorld } from '../src/world/world';

/**
 * One node's store connection gets stuck while short chains run: its store calls reach the
 * store (a write may land) and are never answered, and nothing in the link fails them, as
 * statements on a connection whose server went away without a word. Twice, on each node.
 */
const scenario = resolveScenario({
  name: 'stuck-store',
  headline: 'swarm',
  seed: 5,
  faultPhaseMs: 10 * 60_000,
  livenessMs: 8 * 60_000,
  cluster: { nodes: 2, shardCount: 4, capFraction: 1 },
  workers: { count: 12, slots: 2, pollWaitMs: 25_000 },
  jobs: { durationJitter: 0.3, failureRate: 0.05 },
  load: [{ name: 'chains', count: 30, tasks: 3, shape: 'chain', durationMs: 20_000, everyMs: 2 * 60_000, retries: 2 }],
  faults: { tickMs: 10_000 },
  script: [
    { atMs: 2 * 60_000, action: 'stick-store-link', node: 0, durationMs: 30_000 },
    { atMs: 5 * 60_000, action: 'stick-store-link', node: 1, durationMs: 60_000 },
    { atMs: 8 * 60_000, action: 'stick-store-link', node: 0, durationMs: 5_000 },
  ],
});

describe('Fault: the store connection of one node gets stuck', () => {
  it('fails the stuck calls at their deadline, reconnects, and keeps every invariant; every run finishes', async () => {
    const r = await runWorld(scenario);
    expect(r.violations, r.violations[0]?.message).toEqual([]);
    expect(r.crash).toBeNull();
    expect(r.faults.filter((f) => f.kind === 'store-stuck')).toHaveLength(3);
    // The nodes noticed: calls failed at their deadline, and the connections were replaced.
    expect(r.nodeMetrics.store_calls_timed_out_total ?? 0).toBeGreaterThan(0);
    expect(r.nodeMetrics.store_reconnects_total ?? 0).toBeGreaterThanOrEqual(3);
    expect(r.workerStats.succeeded).toBeGreaterThan(0);
  }, 300_000);

  it('without a deadline per store call the same world never finishes its runs (I7)', async () => {
    // A deadline far beyond the run plays the node as it was: a stuck call waits forever.
    const r = await runWorld({ ...scenario, cluster: { ...scenario.cluster, node: { ...scenario.cluster.node, storeCallTimeoutMs: 1_000_000_000 } } }, { keepGoing: true });
    expect(r.violations.map((v) => v.invariant)).toContain('I7');
  });
});
