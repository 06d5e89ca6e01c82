import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../src/scenario/config';
import { runWorld } from '../src/world/world';

/**
 * The store's primary is lost three times while short chains run: each time every node's
 * store link is cut at once for the promotion window, so the calls in flight either never
 * reach the store or land with their answers lost.
 */
const scenario = resolveScenario({
  name: 'store-failover',
  headline: 'swarm',
  seed: 11,
  faultPhaseMs: 20 * 60_000,
  livenessMs: 10 * 60_000,
  cluster: { nodes: 2, shardCount: 4, capFraction: 1 },
  workers: { count: 12, slots: 2, pollWaitMs: 25_000 },
  jobs: { durationJitter: 0.3, failureRate: 0.05 },
  load: [{ name: 'chains', count: 30, tasks: 3, shape: 'chain', durationMs: 20_000, everyMs: 2 * 60_000, retries: 2 }],
  faults: { tickMs: 10_000 },
  script: [
    { atMs: 4 * 60_000, action: 'store-failover', durationMs: 10_000 },
    { atMs: 9 * 60_000 + 3_000, action: 'store-failover', durationMs: 30_000 },
    { atMs: 15 * 60_000 + 7_000, action: 'store-failover', durationMs: 3_000 },
  ],
});

describe('Fault: the store fails over', () => {
  it('keeps every acknowledged grant and result (I9) and every other invariant, and every run finishes', async () => {
    const r = await runWorld(scenario);
    expect(r.violations, r.violations[0]?.message).toEqual([]);
    expect(r.crash).toBeNull();
    expect(r.faults.filter((f) => f.kind === 'store-failover')).toHaveLength(3);
    const acked = r.checker.acknowledgedCounts;
    expect(acked.fences).toBeGreaterThan(100);
    expect(acked.results).toBeGreaterThan(100);
    expect(r.workerStats.succeeded).toBeGreaterThan(0);
  });

  it('flags an acknowledged result the store no longer keeps', async () => {
    const r = await runWorld({ ...scenario, faultPhaseMs: 5 * 60_000, livenessMs: 5 * 60_000, script: [] });
    expect(r.violations).toEqual([]);
    // Lose one accepted result behind the checker's back, as a store that lost an
    // acknowledged write would have: the check must see it.
    const succeeded = [...r.store.allJobs()].find((j) => j.state === 'succeeded')!;
    const lost = { ...r.store, resultOf: (jobId: string) => (jobId === succeeded.id ? undefined : r.store.resultOf(jobId)) };
    r.checker.checkAcknowledged(lost, 0);
    expect(r.checker.violations.map((v) => v.invariant)).toEqual(['I9']);
  });
});
