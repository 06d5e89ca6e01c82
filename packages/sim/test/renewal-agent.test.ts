import { describe, expect, it } from 'vitest';
import { runScenario } from '../src/scenario/run';
import { SCENARIOS } from '../src/scenarios';

/** The paused-worker story with its hundred identities on hosts of `perHost`. */
function pausedWorker(perHost: number) {
  const file = SCENARIOS['paused-worker']!;
  return { ...file, workers: { ...file.workers!, identitiesPerHost: perHost } };
}

describe('Renewal agent: identities sharing a host renew in one renewMany per node', () => {
  it('keeps the paused-worker story: the paused identities lose their leases, their stale writes are refused, every job has one result', async () => {
    const report = await runScenario(pausedWorker(25));
    const r = report.runs[0]!;
    expect(r.outcome, r.violations[0]?.message).toBe('ok');
    expect(r.figures.pausedWorkers).toBe(20);
    expect(r.figures.leasesExpired).toBeGreaterThanOrEqual(20);
    expect((r.figures.staleResultWritesRefused as number) + (r.figures.staleRenewalsRefused as number)).toBeGreaterThan(0);
    expect(r.figures.pausedJobsWithExactlyOneResult).toBe(r.figures.jobsOfPausedWorkers);
    expect(r.figures.jobsWithMoreThanOneAcceptedResult).toBe(0);
  });

  it('costs fewer events than every identity renewing on its own, for the same jobs', async () => {
    const own = (await runScenario(pausedWorker(1))).runs[0]!;
    const shared = (await runScenario(pausedWorker(100))).runs[0]!;
    expect(shared.outcome).toBe('ok');
    expect(shared.workerStats.succeeded).toBeGreaterThan((own.workerStats.succeeded ?? 0) * 0.95);
    expect(shared.nodeMetrics.renewals_total).toBeGreaterThan(0);
    expect(shared.events).toBeLessThan(own.events * 0.9);
  });

  it('is deterministic', async () => {
    const a = await runScenario(pausedWorker(10), undefined, { seed: 3 });
    const b = await runScenario(pausedWorker(10), undefined, { seed: 3 });
    expect(a.runs[0]!.traceHash).toBe(b.runs[0]!.traceHash);
  });
});
