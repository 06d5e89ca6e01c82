import { runFailoverDrill } from '../../tools/ha/drill';
import { haUnavailableReason } from '../../tools/ha/formation';
import { fmt, type BenchContext, type CaseResult } from '../lib';

/**
 * Case 8: the store's own failover. A pg_auto_failover formation (a primary and a
 * synchronous standby) carries a cluster running a few thousand short jobs; midway, the
 * primary's machine is lost (its keeper and postmaster get SIGKILL). Prints the time from
 * the loss to the standby's promotion, to the first lease the new primary granted, and to
 * the last job's end, and the audit of the store afterwards. Without pg_auto_failover it
 * says so and measures nothing.
 */
export async function storeFailover(ctx: BenchContext): Promise<CaseResult> {
  const unavailable = await haUnavailableReason();
  if (unavailable) return { name: 'store failover', line: `skipped: ${unavailable}`, figures: {} };
  const basePort = 27_000 + Math.floor(Math.random() * 1_000) * 2;
  const r = await runFailoverDrill({
    basePort,
    dags: ctx.quick ? 2 : 8,
    tasksPerDag: 500,
    jobMs: 20,
    killAtFraction: 0.4,
    log: (l) => ctx.log(`  ${l}`),
  });
  const figures = {
    jobs: r.jobs,
    succeededAtKill: r.succeededAtKill,
    killToPromotionMs: r.killToPromotionMs,
    killToFirstLeaseMs: r.killToFirstLeaseMs,
    killToDrainedMs: r.killToDrainedMs,
    reusedFences: r.audit.reusedFences.length,
    lostResults: r.audit.succeededWithoutResult.length,
    duplicateRuns: r.audit.duplicateRuns.length,
    unfinishedJobs: r.audit.nonTerminalJobs,
    violations: r.violations,
  };
  const audit = r.violations.length === 0 ? 'audit clean' : `AUDIT: ${r.violations.length} violations: ${r.violations.slice(0, 3).join('; ')}`;
  return {
    name: 'store failover',
    line: `${fmt(r.jobs)} jobs, primary lost at ${fmt(r.succeededAtKill)} done: promoted in ${fmt(r.killToPromotionMs)} ms, first lease on the new primary ${fmt(r.killToFirstLeaseMs)} ms, drained ${fmt(r.killToDrainedMs)} ms after the loss; ${audit}`,
    figures,
  };
}
