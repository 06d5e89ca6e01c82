import { describe, expect, it } from 'vitest';
import { haUnavailableReason } from '../tools/ha/formation';
import { runFailoverDrill } from '../tools/ha/drill';
import { freePortBlock } from '../tools/ha/ports';

/** The ports a drill takes from its base: the monitor's and one per data node, and its cluster's from base + 10. */
const DRILL_PORTS = 20;

// The formation needs Debian's postgresql-15-auto-failover (.ci/run installs it). Without
// it the test is skipped, and says why.
const unavailable = await haUnavailableReason();
if (unavailable) process.stdout.write(`store failover test skipped: ${unavailable}\n`);

describe.skipIf(unavailable !== null)('cluster: the store survives its own failover', () => {
  it('loses no acknowledged write when the primary is killed mid-run: no fence reused, no result lost, no run doubled', async () => {
    const basePort = await freePortBlock(23_000, 4_000, DRILL_PORTS);
    const report = await runFailoverDrill({ basePort, dags: 6, tasksPerDag: 500, jobMs: 20, killAtFraction: 0.4, log: (l) => process.stdout.write(`drill: ${l}\n`) });
    process.stdout.write(
      `store failover: ${report.jobs} jobs, kill at ${report.succeededAtKill} done; promotion ${report.killToPromotionMs} ms, first lease on the new primary ${report.killToFirstLeaseMs} ms, drained ${report.killToDrainedMs} ms after the kill\n`,
    );
    // The kill landed mid-run, and the new primary served the rest.
    expect(report.succeededAtKill).toBeLessThan(report.jobs);
    expect(report.promotedNode).not.toBe(report.killedNode);
    expect(report.killToFirstLeaseMs).not.toBeNull();
    expect(report.violations).toEqual([]);
    expect(report.audit.succeededJobs).toBe(report.jobs);
    // The promoted standby runs on a new timeline: the store raised its fences once.
    expect(report.timelineFencings).toBe(1);
  }, 600_000);

  it('keeps every fence unique when the standby was asynchronous: the new timeline raises them past any lost grant', async () => {
    const basePort = await freePortBlock(25_000, 2_000, DRILL_PORTS);
    const report = await runFailoverDrill({
      basePort,
      dags: 4,
      tasksPerDag: 500,
      jobMs: 20,
      killAtFraction: 0.4,
      asynchronous: true,
      log: (l) => process.stdout.write(`drill: ${l}\n`),
    });
    process.stdout.write(
      `store failover (asynchronous): promotion ${report.killToPromotionMs} ms, drained ${report.killToDrainedMs} ms after the kill, fencings ${report.timelineFencings}\n`,
    );
    expect(report.timelineFencings).toBe(1);
    expect(report.audit.reusedFences).toEqual([]);
    expect(report.audit.resultsFromRevokedHolders).toEqual([]);
    expect(report.audit.duplicateRuns).toEqual([]);
    expect(report.audit.nonTerminalJobs).toBe(0);
  }, 600_000);
});
