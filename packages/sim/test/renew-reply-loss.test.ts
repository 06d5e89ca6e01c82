import { describe, expect, it } from 'vitest';
import { resolveScenario } from '../src/scenario/config';
import { runWorld } from '../src/world/world';

/**
 * Jobs of 28 to 42 s on a 30 s renew interval: a job still running at 30 s sends a
 * renewal, and with its answer lost that renewal waits for its 10 s timeout while the job
 * ends and writes its result over the same link.
 */
const scenario = resolveScenario({
  name: 'renew-reply-loss',
  headline: 'swarm',
  seed: 5,
  faultPhaseMs: 20 * 60_000,
  livenessMs: 10 * 60_000,
  cluster: { nodes: 2, shardCount: 4, capFraction: 1 },
  workers: { count: 12, slots: 1, pollWaitMs: 25_000 },
  jobs: { durationJitter: 0.2, failureRate: 0 },
  load: [{ name: 'short', count: 20, tasks: 2, shape: 'chain', durationMs: 35_000, everyMs: 5 * 60_000, retries: 0 }],
  faults: { tickMs: 10_000, renewReplyLoss: { probability: 1, minMs: 20_000, maxMs: 60_000 } },
});

describe('Fault: renewal answers lost while the job finishes', () => {
  it('happens, and the job result carrying the fence is accepted once, never written twice or lost', async () => {
    const r = await runWorld(scenario);
    expect(r.violations, r.violations[0]?.message).toEqual([]);
    expect(r.crash).toBeNull();
    expect(r.faults.filter((f) => f.kind === 'renew-reply-loss').length).toBeGreaterThan(50);
    expect(r.renewRepliesLost.length).toBeGreaterThan(0);
    // A lease renewed on the node whose answer never came back, and whose job's result,
    // sent while that renewal was still unanswered, was accepted under the same fence.
    const finishedMeanwhile = r.renewRepliesLost.filter((lost) => {
      const job = r.store.jobById(lost.jobId);
      return job?.state === 'succeeded' && job.fence === lost.fence && job.holder === lost.workerId && job.endedAtMs !== null && job.endedAtMs <= lost.atMs;
    });
    expect(finishedMeanwhile.length).toBeGreaterThan(0);
    // Each of those results was written once: no lease of the job was lost or re-run.
    for (const lost of finishedMeanwhile) expect(r.store.jobById(lost.jobId)!.attempt).toBe(1);
    expect(r.workerStats.succeeded).toBeGreaterThan(0);
    expect(r.workerStats.lost).toBe(0);
  });
});
