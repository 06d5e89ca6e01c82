import type { Knobs } from './knobs';

/**
 * The written `fanout` scenario's timing (packages/sim/scenarios/fanout.json), which the
 * knobs leave as it is. The page keeps its own copy so that its bundle need not load the
 * simulator to warn about a long drain; test/simulator-liveness.test.ts checks the copy
 * against the file.
 */
export const FANOUT_TIMING = {
  faultPhaseMs: 30 * 60_000,
  /** The healed phase the file gives, and the shortest the page runs. */
  baseLivenessMs: 10 * 60_000,
  triggerAtMs: 3 * 60_000,
  fanoutJobMs: 5 * 60_000,
  otherJobMs: 60_000,
  otherEveryMs: 15 * 60_000,
  /** Each attempt takes its duration times (1 ± jitter). */
  durationJitter: 0.2,
  slotsPerWorker: 1,
};

export type FanoutTiming = typeof FANOUT_TIMING;

/**
 * The longest healed phase the page simulates. Twelve virtual hours of a small world take
 * seconds in a browser; a fan-out that needs longer than that (one worker and thousands of
 * jobs) would keep the page busy for minutes, so it is run to this bound and reported
 * unfinished, and the page says so before it runs.
 */
export const MAX_LIVENESS_MS = 12 * 3_600_000;

/** Past this healed phase the page warns that the run will take a while. */
export const LONG_LIVENESS_MS = 2 * 3_600_000;

/**
 * The estimate is an upper bound already (every job at its slowest), and the margin covers
 * what it leaves out: polls, lease grants, and faults that delayed jobs before they healed.
 */
const MARGIN = 1.25;
const SLACK_MS = 5 * 60_000;
const ROUND_TO_MS = 5 * 60_000;

export interface LivenessPlan {
  /** Fan-out jobs that can run at once: its cap, or what the other DAGs leave of the pool if less. */
  concurrency: number;
  /** Slots the other DAGs keep busy on average. */
  otherSlots: number;
  pool: number;
  /** How long the fan-out takes from its trigger with every job at its slowest. */
  drainMs: number;
  /** The healed phase the run is given. */
  livenessMs: number;
  /** The fan-out needs more than MAX_LIVENESS_MS: the run will end with it unfinished, and I7 will say so. */
  exceedsBound: boolean;
}

/**
 * Sizes the healed phase from the knobs, so that I7 ("when faults stop, every job reaches
 * a terminal state") is checked against a fan-out that had time to finish: ten workers
 * under a 30% cap run three jobs at a time, and 200 five-minute jobs then need hours, not
 * the file's ten minutes. The window is never shorter than the file's, and never longer
 * than MAX_LIVENESS_MS, so a fan-out that stalls still fails I7 rather than running on.
 */
export function planLiveness(k: Knobs, t: FanoutTiming = FANOUT_TIMING): LivenessPlan {
  const pool = k.workers * t.slotsPerWorker;
  const cap = k.capPercent === null ? pool : Math.max(1, Math.floor((k.capPercent / 100) * pool + 1e-9));
  const otherSlots = (k.otherDags * t.otherJobMs * (1 + t.durationJitter)) / t.otherEveryMs;
  const concurrency = Math.max(1, Math.min(cap, pool - Math.ceil(otherSlots)));
  const drainMs = Math.ceil(k.fanoutTasks / concurrency) * t.fanoutJobMs * (1 + t.durationJitter);
  const neededMs = t.triggerAtMs + drainMs * MARGIN + SLACK_MS - t.faultPhaseMs;
  const wantedMs = Math.max(t.baseLivenessMs, Math.ceil(neededMs / ROUND_TO_MS) * ROUND_TO_MS);
  return { concurrency, otherSlots, pool, drainMs, livenessMs: Math.min(MAX_LIVENESS_MS, wantedMs), exceedsBound: wantedMs > MAX_LIVENESS_MS };
}

/** A compared pair runs on one clock: both sides get the longer of their windows, so their plots line up. */
export function sharedLivenessMs(plans: LivenessPlan[]): number {
  return Math.max(...plans.map((p) => p.livenessMs));
}

/** A span of virtual time to the minute: "40 min", "8 h 5 min", "12 h". */
export function spanText(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  const h = Math.floor(minutes / 60);
  const m = minutes % 60;
  if (h === 0) return `${m} min`;
  return m === 0 ? `${h} h` : `${h} h ${m} min`;
}

export interface LivenessNotice {
  tone: 'info' | 'warn';
  text: string;
}

/** What the page tells the user before a run whose knobs stretch the healed phase; null when they do not. */
export function livenessNotice(plan: LivenessPlan, k: Knobs, t: FanoutTiming = FANOUT_TIMING): LivenessNotice | null {
  const rate = `${k.fanoutTasks.toLocaleString('en-US')} fan-out jobs run ${plan.concurrency.toLocaleString('en-US')} at a time`;
  const crowded =
    plan.otherSlots >= plan.pool
      ? ` The other DAGs alone keep about ${Math.round(plan.otherSlots).toLocaleString('en-US')} of the ${plan.pool.toLocaleString('en-US')} slots busy, so their runs will queue too.`
      : '';
  if (plan.exceedsBound) {
    return {
      tone: 'warn',
      text: `${rate}, so the fan-out needs up to ${spanText(plan.drainMs)} of virtual time to drain: more than the page simulates (${spanText(t.faultPhaseMs)} with faults and at most ${spanText(MAX_LIVENESS_MS)} healed). Expect it to end unfinished, with I7 reporting it.${crowded}`,
    };
  }
  if (plan.livenessMs <= t.baseLivenessMs) return crowded ? { tone: 'warn', text: crowded.trim() } : null;
  const long = plan.livenessMs >= LONG_LIVENESS_MS;
  return {
    tone: long ? 'warn' : 'info',
    text: `${rate}, so the fan-out needs up to ${spanText(plan.drainMs)} to drain: the healed phase runs ${spanText(plan.livenessMs)} of virtual time instead of ${spanText(t.baseLivenessMs)}, so that I7 judges a fan-out that had time to finish.${long ? ' A drain this long takes a while to simulate.' : ''}${crowded}`,
  };
}
