import { DEFAULT_NODE_CONFIG } from '@fenceline/core/engine';
import type { ScenarioConfig } from '../scenario/config';
import type { WorldResult } from '../world/world';
import { distribution, Metrics } from './metrics';

export type Figures = Record<string, number | string | boolean>;

const minutes = (ms: number): number => Math.round((ms / 60_000) * 100) / 100;
const seconds = (ms: number): number => Math.round(ms / 100) / 10;

/**
 * The figures each scenario answers the seed's questions with. Every figure is derived
 * from what the store recorded, so it is the same number a reader would get by querying
 * the SQL store after a real run.
 */
export function headline(config: ScenarioConfig, r: WorldResult): Figures {
  switch (config.headline) {
    case 'fanout':
      return fanout(config, r);
    case 'leader-crash':
      return leaderCrash(r);
    case 'paused-worker':
      return pausedWorker(r);
    case 'mission-day':
      return missionDay(config, r);
    case 'swarm':
      return {
        violations: r.violations.length,
        faults: r.faults.length,
        jobsSucceeded: r.metrics.totals.jobsSucceeded,
        leasesExpired: r.metrics.totals.leasesExpired,
        refusedWrites: r.metrics.totals.refusedWrites,
        ...effectFigures(r),
        ...lendFigures(config, r),
      };
  }
}

/**
 * Lending's figures, from the checker's shadow of the store: the leases held above their
 * DAG's cap at the peak, the grants that went above a cap, and the lent grants that fell
 * short of the reserve only through the race between nodes (I11). Absent without lending,
 * so the reports of strict-cap runs read as they did.
 */
function lendFigures(config: ScenarioConfig, r: WorldResult): Figures {
  const fraction = config.cluster.lendReserveFraction ?? config.cluster.node?.lendReserveFraction ?? null;
  if (fraction === null) return {};
  return {
    lendReserveFraction: fraction,
    lendReserveMinSlots: config.cluster.lendReserveMinSlots ?? config.cluster.node?.lendReserveMinSlots ?? DEFAULT_NODE_CONFIG.lendReserveMinSlots,
    lendReserveSlots: r.checker.reserve,
    peakLentLeases: r.checker.counts.peakLent,
    lentGrants: r.checker.counts.lentGrants,
    lendRaces: r.checker.counts.lendRaces,
  };
}

function fanout(config: ScenarioConfig, r: WorldResult): Figures {
  const fan = config.load.find((g) => g.shape === 'fanout');
  const group = fan?.name ?? 'fanout';
  const makespans = r.metrics.runMakespanMs.get(group) ?? [];
  const others = [...r.metrics.startLatencyMs].filter(([g]) => g !== group).flatMap(([, v]) => v);
  const other = distribution(others);
  const fanLatency = distribution(r.metrics.startLatencyMs.get(group) ?? []);
  let createdAtMs = 0;
  for (const run of r.store.allRuns()) if (Metrics.groupOf(run.dagId) === group) createdAtMs = run.createdAtMs;
  const total = countJobs(r, group);
  const doneAt = (r.metrics.completedAtByGroup.get(group) ?? []).map((t) => t - createdAtMs).sort((a, b) => a - b);
  // When a share of all the fan-out's jobs had succeeded; absent while fewer had, so an
  // unfinished fan-out is never summarised by the jobs that happened to finish.
  const shareDoneMin = (share: number): Figures => {
    const k = Math.ceil(share * total);
    return total > 0 && doneAt.length >= k ? { [`fanout${Math.round(share * 100)}PercentDoneMin`]: minutes(doneAt[k - 1]!) } : {};
  };
  return {
    capFraction: config.cluster.capFraction,
    fanoutJobs: total,
    fanoutJobsDone: doneAt.length,
    // Only a finished fan-out has a makespan.
    ...(makespans.length > 0 ? { fanoutMakespanMin: minutes(Math.max(...makespans)) } : {}),
    fanoutFinished: makespans.length > 0,
    ...shareDoneMin(0.5),
    ...shareDoneMin(0.99),
    fanoutPeakLeases: r.metrics.peakLeasedByGroup(group),
    ...lendFigures(config, r),
    otherStartLatencyP50s: seconds(other.p50),
    otherStartLatencyP99s: seconds(other.p99),
    otherStartLatencyMaxS: seconds(other.max),
    otherJobsStarted: other.count,
    fanoutStartLatencyP50s: seconds(fanLatency.p50),
  };
}

function countJobs(r: WorldResult, group: string): number {
  let n = 0;
  for (const run of r.store.allRuns()) if (Metrics.groupOf(run.dagId) === group) n += run.jobIds.length;
  return n;
}

function leaderCrash(r: WorldResult): Figures {
  const crash = r.notes.leaderCrash;
  if (!crash) return { crashed: false };
  const takeover = r.metrics.leaderChanges.find((c) => c.shard === crash.shard && c.atMs >= crash.atMs && c.nodeId !== crash.nodeId);
  // The runs of the tick the leader missed: slots due before the takeover (the one it died
  // in the middle of, or one that came while the shard had no leader) whose run was
  // created after the crash, necessarily by the new leader's first ticks.
  const missedUntilMs = takeover?.atMs ?? crash.atMs;
  let missedSlotRuns = 0;
  let duplicateRuns = 0;
  const seen = new Set<string>();
  for (const run of r.store.allRuns()) {
    const key = `${run.dagId}@${run.scheduledAtMs}`;
    if (seen.has(key)) duplicateRuns++;
    seen.add(key);
    if (run.shard === crash.shard && run.trigger === 'schedule' && run.createdAtMs > crash.atMs && run.scheduledAtMs <= missedUntilMs) missedSlotRuns++;
  }
  const disturbed = crash.leasedAtCrash.filter((j) => {
    const result = r.store.resultOf(j.jobId);
    return !(result && result.fence === j.fence && result.outcome === 'succeeded');
  }).length;
  return {
    crashedNode: crash.nodeId,
    shard: crash.shard,
    takeoverS: takeover ? seconds(takeover.atMs - crash.atMs) : -1,
    newLeader: takeover?.nodeId ?? 'none',
    missedSlotRunsCreatedAfterCrash: missedSlotRuns,
    missedTickRan: missedSlotRuns > 0 && !r.violations.some((v) => v.invariant === 'I5'),
    duplicateRuns,
    runningJobsAtCrash: crash.leasedAtCrash.length,
    runningJobsDisturbed: disturbed,
    leasesGrantedButUndeliveredAtCrash: crash.undelivered,
  };
}

function pausedWorker(r: WorldResult): Figures {
  const paused = r.notes.pausedWorkers;
  let moreThanOne = 0;
  for (const n of r.metrics.completionsPerJob.values()) if (n > 1) moreThanOne++;
  let pausedJobsWithOneResult = 0;
  for (const j of paused?.jobs ?? []) if ((r.metrics.completionsPerJob.get(j.jobId) ?? 0) === 1) pausedJobsWithOneResult++;
  const refusedResultWrites = (r.metrics.refusedByOp.complete ?? 0) + (r.metrics.refusedByOp.fail ?? 0);
  return {
    pausedWorkers: paused?.ids.length ?? 0,
    jobsOfPausedWorkers: paused?.jobs.length ?? 0,
    leasesExpired: r.metrics.totals.leasesExpired,
    staleResultWritesRefused: refusedResultWrites,
    staleRenewalsRefused: r.metrics.refusedByOp.renew ?? 0,
    refusedStale: r.metrics.refusedByCode.STALE_FENCE ?? 0,
    refusedLeaseLost: r.metrics.refusedByCode.LEASE_LOST ?? 0,
    pausedJobsWithExactlyOneResult: pausedJobsWithOneResult,
    jobsWithMoreThanOneAcceptedResult: moreThanOne,
    ...effectFigures(r),
  };
}

/**
 * What the sinks outside the scheduler decided (I12): effects applied, tried after the
 * lease was lost, refused as stale, found already applied, and the duplicates a sink
 * without a fence check would have taken.
 */
function effectFigures(r: WorldResult): Figures {
  const e = r.checker.effectCounts;
  return {
    effectsApplied: e.applied,
    effectsTriedLate: e.late,
    effectsRefusedStale: e.stale,
    effectsAlreadyApplied: e.alreadyApplied,
    effectDuplicatesWithoutFences: e.unguardedDuplicates,
  };
}

function missionDay(config: ScenarioConfig, r: WorldResult): Figures {
  const virtualH = (r.endMs - r.startMs) / 3_600_000;
  const all = [...r.metrics.startLatencyMs.values()].flat();
  const lat = distribution(all);
  const failovers = r.metrics.leaderChanges.filter((c) => c.epoch > 1).length;
  return {
    scale: config.scale,
    dags: r.size.dags,
    workers: r.size.workers,
    jobsPlannedPerDay: r.size.jobsPlannedPerDay,
    jobsSucceeded: r.metrics.totals.jobsSucceeded,
    jobsFailed: r.metrics.totals.jobsFailed,
    throughputJobsPerHour: Math.round(r.metrics.totals.jobsSucceeded / Math.max(virtualH, 1e-9)),
    startsPerSecond: Math.round((r.metrics.totals.leasesGranted / Math.max(virtualH * 3600, 1e-9)) * 100) / 100,
    peakRunning: Math.max(0, ...r.metrics.samples.map((s) => s.leased)),
    startLatencyP50s: seconds(lat.p50),
    startLatencyP90s: seconds(lat.p90),
    startLatencyP99s: seconds(lat.p99),
    startLatencyMaxS: seconds(lat.max),
    peakCapUsePercent: Math.round(r.checker.counts.peakCapUse * 1000) / 10,
    failovers,
    leasesExpired: r.metrics.totals.leasesExpired,
    refusedWrites: r.metrics.totals.refusedWrites,
    faultsInjected: r.faults.length,
  };
}
