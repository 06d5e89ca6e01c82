import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../src/scenario/config';
import { runWorld } from '../src/world/world';

/**
 * One node's result writes are refused at once while every other call of it is answered,
 * as a pool left on a server in recovery after a failover: no call of it ever passes its
 * deadline, so only the node's check of its write path as a whole can notice.
 */
const scenario = resolveScenario({
  name: 'refused-writes',
  headline: 'swarm',
  seed: 7,
  faultPhaseMs: 8 * 60_000,
  livenessMs: 8 * 60_000,
  cluster: { nodes: 2, shardCount: 4, capFraction: 1 },
  workers: { count: 8, slots: 2, pollWaitMs: 25_000 },
  jobs: { durationJitter: 0.3, failureRate: 0 },
  load: [{ name: 'chains', count: 20, tasks: 3, shape: 'chain', durationMs: 10_000, everyMs: 60_000, retries: 2 }],
  faults: { tickMs: 10_000 },
  script: [
    { atMs: 2 * 60_000, action: 'refuse-store-writes', node: 0, durationMs: 10 * 60_000 },
    { atMs: 4 * 60_000, action: 'refuse-store-writes', node: 1, durationMs: 10 * 60_000 },
  ],
});

describe('Fault: one node refuses its result writes at once', () => {
  it('notices the write path stalled, replaces its connections, and keeps every invariant; every run finishes', async () => {
    const r = await runWorld(scenario);
    expect(r.violations, r.violations[0]?.message).toEqual([]);
    expect(r.crash).toBeNull();
    expect(r.faults.filter((f) => f.kind === 'store-writes-refused')).toHaveLength(2);
    // No call went past its deadline: each refusal came at once.
    expect(r.nodeMetrics.store_calls_timed_out_total ?? 0).toBe(0);
    expect(r.nodeMetrics.result_write_stalls_total ?? 0).toBeGreaterThanOrEqual(2);
    expect(r.nodeMetrics.store_reconnects_total ?? 0).toBeGreaterThanOrEqual(2);
    expect(r.nodeMetrics.result_writes_stalled ?? 0).toBe(0);
    expect(r.workerStats.succeeded).toBeGreaterThan(0);
  }, 300_000);
});
