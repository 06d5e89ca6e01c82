import { DEFAULTS, LIMITS } from '../limits';
import type { CatchupPolicy, Schedule } from '../spec';
import { intervalAnchorMs, lastSlotAtOrBefore, nextSlotAfter, walkBackward, walkForward } from './slots';

export interface TickInput {
  schedule: Schedule;
  catchup: CatchupPolicy;
  /** The DAG's next_run_at: the oldest slot not yet handled. */
  nextRunAtMs: number;
  /** Store time of this tick. */
  nowMs: number;
  /** Under the `none` policy a slot at most this late still runs (default DEFAULTS.lateGraceMs). */
  lateGraceMs?: number;
  /** The most runs one tick creates for one DAG (default LIMITS.maxRunsPerDagPerTick). */
  maxRuns?: number;
}

export interface TickPlan {
  /** Slots to create runs for, ascending. */
  slotsMs: number[];
  /** The DAG's new next_run_at: the first slot strictly after now (null when none). */
  nextRunAtMs: number | null;
  /** Due slots that get no run. */
  skipped: number;
  /**
   * False when `skipped` is a lower bound rather than an exact count. That happens only
   * for cron schedules after an outage longer than CRON_COUNT_CAP slots: counting every
   * missed slot of a per-second cron after a month would take millions of croner steps
   * just to report a number, so the count stops there.
   */
  skippedExact: boolean;
}

/**
 * How many cron slots one tick walks forward, one by one, to list and count the due
 * slots. Beyond it the tick finds the slots it keeps by searching backwards from now,
 * and `skipped` becomes a lower bound. A zoned cron step costs about 0.3 ms on Node 20,
 * so the cap bounds a tick for one DAG to roughly 150 ms in the worst case.
 */
export const CRON_COUNT_CAP = 500;

/**
 * Decides which of a DAG's due slots get a run on this tick. The tick asks what is due,
 * not what minute it is (docs/architecture.md, rule 7), so a leader that takes over after an outage
 * finds every missed slot here and the DAG's catch-up policy decides which of them run:
 *
 * - the due slots are `nextRunAtMs` itself (due when it is at or before now) and every
 *   later slot at or before now;
 * - `all` runs the due slots no older than now - catchup.windowMs, at most `maxRuns`
 *   of them, the most recent ones when there are more;
 * - `latest` runs only the most recent due slot;
 * - `none` runs the most recent due slot only if it is at most `lateGraceMs` late.
 *
 * The cost does not grow with the length of an outage: interval schedules are pure
 * arithmetic, and cron schedules walk at most CRON_COUNT_CAP slots forward plus
 * `maxRuns` slots backwards.
 */
export function planTick(input: TickInput): TickPlan {
  const { schedule, catchup, nextRunAtMs, nowMs } = input;
  const lateGraceMs = input.lateGraceMs ?? DEFAULTS.lateGraceMs;
  const maxRuns = Math.max(0, Math.floor(input.maxRuns ?? LIMITS.maxRunsPerDagPerTick));
  if (!Number.isFinite(nextRunAtMs) || !Number.isFinite(nowMs)) {
    throw new Error(`planTick: nextRunAtMs (${nextRunAtMs}) and nowMs (${nowMs}) must be finite epoch milliseconds`);
  }
  if (nextRunAtMs > nowMs) return { slotsMs: [], nextRunAtMs, skipped: 0, skippedExact: true };

  const windowStartMs = nowMs - catchup.windowMs;
  if (schedule.kind === 'interval') {
    return { ...intervalPlan(schedule), nextRunAtMs: nextSlotAfter(schedule, nowMs), skippedExact: true };
  }
  if (schedule.kind === 'manual') {
    // A manual DAG has no next_run_at in normal operation; if one is set anyway, that
    // single slot is all that is due, and nothing follows it.
    return { ...applyPolicy([nextRunAtMs]), nextRunAtMs: null, skippedExact: true };
  }

  // `nextRunAtMs` is due even when it is not a slot of the current schedule (the
  // schedule may have changed since it was computed); the later due slots are the
  // schedule's own slots in (nextRunAtMs, nowMs].
  const forward = walkForward(schedule, nextRunAtMs, nowMs, CRON_COUNT_CAP);
  const following = forward.following !== undefined ? forward.following : nextSlotAfter(schedule, nowMs);
  if (forward.complete) {
    // Every due slot is listed, so the policy is a filter over an explicit list.
    return { ...applyPolicy([nextRunAtMs, ...forward.slots]), nextRunAtMs: following, skippedExact: true };
  }

  // A cron schedule with more due slots than the forward walk may list.
  const lastListed = forward.slots[forward.slots.length - 1] ?? nextRunAtMs;
  const latest = lastSlotAtOrBefore(schedule, nowMs, lastListed) ?? lastListed;
  let kept: number[];
  let dueAtLeast = 1 + forward.slots.length + (latest > lastListed ? 1 : 0);
  if (catchup.policy === 'all') {
    const recent = walkBackward(schedule, nowMs, Math.max(nextRunAtMs, windowStartMs - 1), maxRuns).reverse();
    if (recent.length < maxRuns && nextRunAtMs >= windowStartMs) recent.unshift(nextRunAtMs);
    kept = recent;
    const beyondListed = recent.filter((s) => s > lastListed).length;
    dueAtLeast = Math.max(dueAtLeast, 1 + forward.slots.length + beyondListed);
  } else {
    kept = keepLatest(latest);
  }
  return { slotsMs: kept, nextRunAtMs: following, skipped: Math.max(0, dueAtLeast - kept.length), skippedExact: false };

  function keepLatest(latestMs: number): number[] {
    if (catchup.policy === 'none' && nowMs - latestMs > lateGraceMs) return [];
    return [latestMs];
  }

  function applyPolicy(due: number[]): { slotsMs: number[]; skipped: number } {
    let kept: number[];
    if (catchup.policy === 'all') {
      const inWindow = due.filter((s) => s >= windowStartMs);
      kept = inWindow.slice(Math.max(0, inWindow.length - maxRuns));
    } else {
      kept = keepLatest(due[due.length - 1]!);
    }
    return { slotsMs: kept, skipped: due.length - kept.length };
  }

  function intervalPlan(interval: Extract<Schedule, { kind: 'interval' }>): { slotsMs: number[]; skipped: number } {
    const every = interval.everyMs;
    const anchorMs = intervalAnchorMs(interval);
    const kFirst = Math.floor((nextRunAtMs - anchorMs) / every) + 1;
    const kLast = Math.floor((nowMs - anchorMs) / every);
    const laterDue = Math.max(0, kLast - kFirst + 1);
    const due = 1 + laterDue;
    let kept: number[];
    if (catchup.policy === 'all') {
      const kWindow = Math.ceil((windowStartMs - anchorMs) / every);
      const kStart = Math.max(kFirst, kWindow, kLast - maxRuns + 1);
      kept = [];
      for (let k = kStart; k <= kLast; k++) kept.push(anchorMs + k * every);
      if (kept.length < maxRuns && nextRunAtMs >= windowStartMs) kept.unshift(nextRunAtMs);
    } else {
      kept = keepLatest(laterDue > 0 ? anchorMs + kLast * every : nextRunAtMs);
    }
    return { slotsMs: kept, skipped: due - kept.length };
  }
}
