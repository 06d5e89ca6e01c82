import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../tools/start/cluster';
import { fmt } from './lib';

/**
 * The CPU guard: CPU per job summed over every process of the end-to-end case (schedulers,
 * workers and the database's backends) is steady on a noisy machine where jobs per second
 * is not, so each phase's figure is compared with a baseline kept in the repository, and a
 * phase that costs more than LIMIT times its baseline fails the run. A regression of 10x
 * went unnoticed once because nothing compared; a busy machine moves this figure by tens of
 * percent, never by 3x.
 */
export const BASELINE_FILE = join(REPO_ROOT, 'bench', 'cpu-baseline.json');

/** How many times its baseline a phase may cost before the run fails (BENCH_CPU_GUARD_LIMIT overrides it). */
export const DEFAULT_LIMIT = 3;

export const GUARDED_PHASES = ['wide', 'small', 'paced'] as const;
export type GuardedPhase = (typeof GUARDED_PHASES)[number];

/** CPU per job in microseconds, by phase, for one bench mode. */
export type CpuPerJob = Record<GuardedPhase, number>;

export interface CpuBaseline {
  /** The commit the figures were measured at, and why they were (re)taken. */
  commit: string;
  measuredAt: string;
  reason: string;
  /** One set per bench mode: the quick shape (CI) and the full shape differ. */
  modes: Partial<Record<'quick' | 'full', CpuPerJob>>;
}

interface PhaseFigures {
  jobs: number;
  cpuSeconds: Record<string, number>;
}

/** CPU per job of each guarded phase of an end-to-end result's figures, or null when a phase is missing. */
export function cpuPerJob(figures: Record<string, unknown>): CpuPerJob | null {
  const out: Partial<CpuPerJob> = {};
  for (const name of GUARDED_PHASES) {
    const phase = figures[name] as PhaseFigures | undefined;
    if (!phase || !(phase.jobs > 0)) return null;
    const seconds = Object.values(phase.cpuSeconds).reduce((a, b) => a + b, 0);
    out[name] = Math.round((seconds * 1e6) / phase.jobs);
  }
  return out as CpuPerJob;
}

export function readBaseline(file = BASELINE_FILE): CpuBaseline | null {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as CpuBaseline;
  } catch {
    return null;
  }
}

export function writeBaseline(baseline: CpuBaseline, file = BASELINE_FILE): void {
  writeFileSync(file, `${JSON.stringify(baseline, null, 2)}\n`);
}

export function guardLimit(raw = process.env.BENCH_CPU_GUARD_LIMIT): number {
  if (raw === undefined || raw === '') return DEFAULT_LIMIT;
  const limit = Number(raw);
  if (!Number.isFinite(limit) || limit <= 1) throw new Error(`BENCH_CPU_GUARD_LIMIT: "${raw}" is not a number above 1`);
  return limit;
}

export interface GuardVerdict {
  lines: string[];
  /** Phases over the limit; empty when the run passes (or there was nothing to compare with). */
  over: GuardedPhase[];
}

/** Compares measured CPU per job with the baseline of the same mode, one line per phase with its ratio. */
export function judge(measured: CpuPerJob, baseline: CpuBaseline | null, mode: 'quick' | 'full', limit: number): GuardVerdict {
  const base = baseline?.modes[mode];
  if (!baseline || !base) {
    return {
      lines: GUARDED_PHASES.map((p) => `cpu guard: ${p} ${fmt(measured[p])} us/job (no ${mode} baseline in bench/cpu-baseline.json to compare with)`),
      over: [],
    };
  }
  const over: GuardedPhase[] = [];
  const lines = GUARDED_PHASES.map((p) => {
    const ratio = measured[p] / base[p];
    const fails = ratio > limit;
    if (fails) over.push(p);
    return `cpu guard: ${p} ${fmt(measured[p])} us/job = ${ratio.toFixed(2)}x the baseline (${fmt(base[p])} us/job at ${baseline.commit.slice(0, 7)}), limit ${limit}x${fails ? ': REGRESSION' : ''}`;
  });
  return { lines, over };
}

export interface GuardOutcome {
  /** The run's exit code as the guard sees it: 0 passed (or nothing to judge), 3 a regression, 64 a baseline asked for without figures. */
  code: 0 | 3 | 64;
  /** What to print on standard output, and on standard error. */
  out: string[];
  err: string[];
}

export interface GuardOptions {
  file?: string;
  limit?: number;
  now?: () => Date;
}

/**
 * The guard of one bench run: each end-to-end phase's CPU per job beside its baseline,
 * and exit code 3 when one costs more than the limit; with setBaseline, this run's figures
 * become the baseline of its mode instead (in `file`, the repository's by default).
 */
export function guardRun(
  results: readonly { key: string; figures: Record<string, unknown> }[],
  mode: 'quick' | 'full',
  commit: string,
  setBaseline: string | null,
  options: GuardOptions = {},
): GuardOutcome {
  const file = options.file ?? BASELINE_FILE;
  const e2e = results.find((r) => r.key === 'e2e');
  const measured = e2e ? cpuPerJob(e2e.figures) : null;
  if (!measured) {
    if (setBaseline === null) return { code: 0, out: [], err: [] };
    return { code: 64, out: [], err: ['--set-cpu-baseline: this run has no end-to-end figures to record (run the e2e case)'] };
  }
  const baseline = readBaseline(file);
  if (setBaseline !== null) {
    const measuredAt = (options.now?.() ?? new Date()).toISOString();
    writeBaseline({ commit, measuredAt, reason: setBaseline.trim(), modes: { ...baseline?.modes, [mode]: measured } }, file);
    return { code: 0, out: [`cpu guard: recorded the ${mode} baseline (${JSON.stringify(measured)} us/job) in bench/cpu-baseline.json`], err: [] };
  }
  const limit = options.limit ?? guardLimit();
  const verdict = judge(measured, baseline, mode, limit);
  if (verdict.over.length === 0) return { code: 0, out: verdict.lines, err: [] };
  const failed = `cpu guard: FAILED: CPU per job of ${verdict.over.join(', ')} is more than ${limit}x the baseline; find what the hot path pays for before merging`;
  return { code: 3, out: [...verdict.lines, failed], err: [] };
}
