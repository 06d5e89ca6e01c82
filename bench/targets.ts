import { fmt } from './lib';

/**
 * The speed targets, printed after a run with each figure's ratio to its target, so a run
 * says where fenceline stands without anyone reading the JSON. Targets are read, never
 * asserted: the only asserted figure is the CPU guard (cpu-guard.ts).
 */
export const TARGETS = {
  /** Small DAGs' CPU per job summed over every process, at most this many microseconds. */
  smallCpuPerJobUs: 120,
  /** The paced phase's dispatch p99 at most this many times the bare one-row commit p99 of the same phase. */
  pacedP99OverCommitP99: 3,
  /** 1,000 of 100,000 DAGs due: the whole tick's p99 (here its max over the ticks measured) under this many ms. */
  tickMs: 100,
  /** The full mission-day simulation under this many seconds of wall time. */
  simSeconds: 360,
} as const;

interface Result {
  key: string;
  figures: Record<string, unknown>;
}

type Phase = { jobsPerSec?: number; jobs?: number; cpuSeconds?: Record<string, number>; dispatchP99Ms?: number | null; storeCommitMs?: { p99?: number | null } };

function phaseOf(results: Result[], name: string): Phase | null {
  const e2e = results.find((r) => r.key === 'e2e');
  return (e2e?.figures[name] as Phase | undefined) ?? null;
}

function cpuPerJobUs(p: Phase | null): number | null {
  if (!p?.cpuSeconds || !p.jobs) return null;
  return (Object.values(p.cpuSeconds).reduce((a, b) => a + b, 0) * 1e6) / p.jobs;
}

/** One line per target that this run measured: the figure, the target, and their ratio. */
export function targetLines(results: Result[]): string[] {
  const lines: string[] = [];
  const peers = results.find((r) => r.key === 'peers')?.figures as { ran?: boolean; best?: { case: string; jobsPerSec: number } | null } | undefined;
  for (const name of ['wide', 'small'] as const) {
    const p = phaseOf(results, name);
    if (!p?.jobsPerSec) continue;
    if (peers?.best)
      lines.push(
        `target: ${name} ${fmt(p.jobsPerSec)} jobs/s = ${(p.jobsPerSec / peers.best.jobsPerSec).toFixed(2)}x the best peer of this run (${peers.best.case} ${fmt(peers.best.jobsPerSec)} jobs/s); target 1x`,
      );
    else lines.push(`target: ${name} ${fmt(p.jobsPerSec)} jobs/s; no peer figures in this run to compare with (run with --only ...,peers)`);
  }
  const smallCpu = cpuPerJobUs(phaseOf(results, 'small'));
  if (smallCpu !== null)
    lines.push(`target: small CPU per job ${fmt(smallCpu)} us = ${(smallCpu / TARGETS.smallCpuPerJobUs).toFixed(1)}x the target of ${TARGETS.smallCpuPerJobUs} us`);
  const paced = phaseOf(results, 'paced');
  const commitP99 = paced?.storeCommitMs?.p99;
  if (paced?.dispatchP99Ms != null && commitP99) {
    const ratio = paced.dispatchP99Ms / commitP99;
    lines.push(
      `target: paced dispatch p99 ${fmt(paced.dispatchP99Ms, 1)} ms = ${ratio.toFixed(1)}x the one-row commit p99 of ${fmt(commitP99, 1)} ms; target ${TARGETS.pacedP99OverCommitP99}x`,
    );
  }
  const tick = results.find((r) => r.key === 'tick')?.figures as { fullTicks?: { startMs: number }[] } | undefined;
  const ticks = tick?.fullTicks?.map((t) => t.startMs) ?? [];
  if (ticks.length > 0) {
    const worst = Math.max(...ticks);
    lines.push(`target: whole tick, 1,000 due, worst of ${ticks.length} ${fmt(worst)} ms = ${(worst / TARGETS.tickMs).toFixed(1)}x the target of ${TARGETS.tickMs} ms`);
  }
  const sim = results.find((r) => r.key === 'sim')?.figures as { finished?: boolean; runs?: { wallMs: number }[]; budgetMs?: number } | undefined;
  if (sim?.finished && sim.runs?.[0]) {
    const s = sim.runs[0].wallMs / 1000;
    lines.push(`target: mission-day ${fmt(s, 1)} s wall = ${(s / TARGETS.simSeconds).toFixed(2)}x the target of ${TARGETS.simSeconds} s`);
  } else if (sim && sim.finished === false)
    lines.push(`target: mission-day did not finish within its budget of ${fmt((sim.budgetMs ?? 0) / 1000)} s (target ${TARGETS.simSeconds} s)`);
  return lines;
}
