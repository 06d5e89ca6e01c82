import { describe, expect, it } from 'vitest';
import { haUnavailableReason } from '../tools/ha/formation';
import { freePortBlock } from '../tools/ha/ports';
import { runRepeatDrill } from '../tools/ha/repeat';

/** The ports a drill takes from its base: the monitor's and one per data node, and its cluster's from base + 10. */
const DRILL_PORTS = 20;

// The formation needs Debian's postgresql-15-auto-failover (.ci/run installs it). Without
// it the test is skipped, and says why.
const unavailable = await haUnavailableReason();
if (unavailable) process.stdout.write(`repeated store failover test skipped: ${unavailable}\n`);

describe.skipIf(unavailable !== null)('cluster: the store survives primary kills in a row', () => {
  // Each round's run finishes and every job is accepted once: a result is accepted only
  // from a primary that commits it with its synchronous standby, so no promotion can lose one.
  it('finishes each round within 60 s of its kill, three kills in a row, every job once', { timeout: 900_000 }, async () => {
    const basePort = await freePortBlock(27_000, 2_000, DRILL_PORTS);
    const report = await runRepeatDrill({ basePort, rounds: 3, jobs: 100, kill: 'postmaster', log: (l) => process.stdout.write(`repeat: ${l}\n`) });
    // Every round's kill landed while its run was under way, and each run then finished.
    expect(report.rounds.map((r) => r.round)).toEqual([1, 2, 3]);
    expect(report.failedRounds).toEqual([]);
    for (const r of report.rounds) expect(r.doneMs).toBeLessThan(60_000);
    expect(report.violations).toEqual([]);
    expect(report.audit.succeededJobs).toBe(300);
  });
});
