import { Cron } from 'croner';
import type { Schedule } from '../spec';

/**
 * Schedule slots: the instants (epoch milliseconds) at which a DAG is meant to run.
 *
 * - manual: no slots at all; runs only come from triggers.
 * - interval: anchor + k * everyMs for every integer k, the anchor defaulting to the Unix
 *   epoch. Computed arithmetically, so any question costs O(1) no matter how many slots
 *   it spans.
 * - cron: croner's next-run computation in the schedule's time zone. Cron slots are always
 *   whole seconds. Croner can only step forward, so looking backwards (the latest slot
 *   before an instant) is a galloping search over forward steps; see lastSlotAtOrBefore.
 *
 * Nothing here reads the clock: every instant is an argument.
 */

/**
 * Zones that are UTC under another name. Croner's time-zone path formats dates through
 * Intl on every step (about 0.3 ms per step on Node 20), while a fixed zero offset is
 * about 70 times faster and gives the same slots, so UTC schedules (the default) take it.
 */
const UTC_ZONES = new Set([
  'UTC',
  'ETC/UTC',
  'GMT',
  'ETC/GMT',
  'UCT',
  'ETC/UCT',
  'ZULU',
  'ETC/ZULU',
  'UNIVERSAL',
  'ETC/UNIVERSAL',
  'GREENWICH',
  'ETC/GREENWICH',
  'GMT0',
  'ETC/GMT0',
  'GMT+0',
  'GMT-0',
  'ETC/GMT+0',
  'ETC/GMT-0',
]);

const CRON_CACHE_LIMIT = 4096;
const cronCache = new Map<string, Cron>();

/**
 * A croner instance for `expr` in `timezone`, cached because parsing a pattern on every
 * tick of 100,000 DAGs would be waste. The instance is created paused and without a
 * function, so croner never starts a timer: it is used only to compute dates. Throws
 * croner's error when the expression or the zone is invalid.
 */
export function cronFor(expr: string, timezone: string): Cron {
  const key = `${timezone}\u0000${expr}`;
  let cron = cronCache.get(key);
  if (cron === undefined) {
    cron = UTC_ZONES.has(timezone.toUpperCase()) ? new Cron(expr, { utcOffset: 0, paused: true }) : new Cron(expr, { timezone, paused: true });
    // A plain size bound is enough: the set of distinct schedules a process sees is small
    // and stable, so clearing on overflow costs a few re-parses at worst.
    if (cronCache.size >= CRON_CACHE_LIMIT) cronCache.clear();
    cronCache.set(key, cron);
  }
  return cron;
}

/** The anchor of an interval schedule in epoch milliseconds (0 when not set). */
export function intervalAnchorMs(schedule: Extract<Schedule, { kind: 'interval' }>): number {
  if (schedule.anchor === undefined) return 0;
  const ms = Date.parse(schedule.anchor);
  if (!Number.isFinite(ms)) throw new Error(`interval anchor "${schedule.anchor}" is not a valid ISO date-time`);
  return ms;
}

function assertFinite(name: string, value: number): void {
  if (!Number.isFinite(value)) throw new Error(`${name} must be a finite number of epoch milliseconds, got ${value}`);
}

function cronNext(cron: Cron, afterMs: number): number | null {
  const next = cron.nextRun(new Date(afterMs));
  return next === null ? null : next.getTime();
}

/** Index k of the last grid slot at or before `ms` (anchor + k * everyMs <= ms). */
function gridIndexAtOrBefore(anchorMs: number, everyMs: number, ms: number): number {
  return Math.floor((ms - anchorMs) / everyMs);
}

/** The first slot strictly after `afterMs`, or null for a manual schedule (or a cron that never fires again). */
export function nextSlotAfter(schedule: Schedule, afterMs: number): number | null {
  assertFinite('afterMs', afterMs);
  switch (schedule.kind) {
    case 'manual':
      return null;
    case 'interval': {
      const anchorMs = intervalAnchorMs(schedule);
      return anchorMs + (gridIndexAtOrBefore(anchorMs, schedule.everyMs, afterMs) + 1) * schedule.everyMs;
    }
    case 'cron':
      return cronNext(cronFor(schedule.cron, schedule.timezone), afterMs);
  }
}

/** The first slot at or after `nowMs`: what a newly created or re-enabled DAG waits for. */
export function firstSlot(schedule: Schedule, nowMs: number): number | null {
  return nextSlotAfter(schedule, nowMs - 1);
}

/** Up to `max` slots in (fromExclusiveMs, toInclusiveMs], ascending. */
export function slotsBetween(schedule: Schedule, fromExclusiveMs: number, toInclusiveMs: number, max: number): number[] {
  return walkForward(schedule, fromExclusiveMs, toInclusiveMs, max).slots;
}

/**
 * Up to `max` slots in (fromExclusiveMs, toInclusiveMs], ascending. `complete` says whether
 * these are all the slots of the range; `following` is the first slot after the range when
 * the walk got that far (it costs nothing extra, and the tick needs it as its next run).
 */
export function walkForward(
  schedule: Schedule,
  fromExclusiveMs: number,
  toInclusiveMs: number,
  max: number,
): { slots: number[]; complete: boolean; following: number | null | undefined } {
  assertFinite('fromExclusiveMs', fromExclusiveMs);
  assertFinite('toInclusiveMs', toInclusiveMs);
  const limit = Math.max(0, Math.floor(max));
  const slots: number[] = [];
  if (schedule.kind === 'manual') return { slots, complete: true, following: null };
  if (schedule.kind === 'interval') {
    const anchorMs = intervalAnchorMs(schedule);
    const every = schedule.everyMs;
    const kFirst = gridIndexAtOrBefore(anchorMs, every, fromExclusiveMs) + 1;
    const kLast = gridIndexAtOrBefore(anchorMs, every, toInclusiveMs);
    const total = Math.max(0, kLast - kFirst + 1);
    for (let k = kFirst; k < kFirst + Math.min(total, limit); k++) slots.push(anchorMs + k * every);
    const complete = total <= limit;
    return { slots, complete, following: complete ? anchorMs + (Math.max(kLast, kFirst - 1) + 1) * every : undefined };
  }
  const cron = cronFor(schedule.cron, schedule.timezone);
  let at = fromExclusiveMs;
  for (;;) {
    const next = cronNext(cron, at);
    if (next === null || next > toInclusiveMs) return { slots, complete: true, following: next };
    if (slots.length >= limit) return { slots, complete: false, following: undefined };
    slots.push(next);
    at = next;
  }
}

/**
 * The latest slot s with afterExclusiveMs < s <= atMs, or null if there is none.
 *
 * For cron this gallops backwards: it asks croner for the first slot after atMs - d for
 * d = 1 s, 2 s, 4 s, ... until one lands at or before atMs, then bisects to the second.
 * That is about 2 * log2(gap between slots / 1 s) croner steps (some 34 for a daily
 * schedule) instead of walking every slot since the lower bound. `hintMs`, the gap seen
 * between the previous two slots, lets a backwards walk over a regular schedule find
 * each slot in two steps.
 */
export function lastSlotAtOrBefore(schedule: Schedule, atMs: number, afterExclusiveMs: number, hintMs?: number): number | null {
  assertFinite('atMs', atMs);
  // A finite lower bound is what makes the backwards search terminate for a cron that
  // has no slot before atMs.
  assertFinite('afterExclusiveMs', afterExclusiveMs);
  if (atMs <= afterExclusiveMs) return null;
  if (schedule.kind === 'manual') return null;
  if (schedule.kind === 'interval') {
    const anchorMs = intervalAnchorMs(schedule);
    const slot = anchorMs + gridIndexAtOrBefore(anchorMs, schedule.everyMs, atMs) * schedule.everyMs;
    return slot > afterExclusiveMs ? slot : null;
  }
  const cron = cronFor(schedule.cron, schedule.timezone);
  const landsBefore = (probeMs: number): number | null => {
    const next = cronNext(cron, probeMs);
    return next !== null && next <= atMs ? next : null;
  };
  // Invariants of the search below: some slot lies in (lo, atMs], and none in (hi, atMs].
  // NaN until a probe that lands a slot at or before atMs is known.
  let lo = Number.NaN;
  let hi = atMs;
  let distance = 1000;
  if (hintMs !== undefined && hintMs > 0) {
    const probe = Math.max(atMs - hintMs, afterExclusiveMs);
    const found = landsBefore(probe);
    if (found !== null) {
      // One more step tells whether `found` is the last one before atMs (the usual case).
      if (landsBefore(found) === null) return found;
      lo = found;
    } else {
      if (probe === afterExclusiveMs) return null;
      hi = probe;
      distance = hintMs * 2;
    }
  }
  while (Number.isNaN(lo)) {
    const probe = Math.max(atMs - distance, afterExclusiveMs);
    if (landsBefore(probe) !== null) {
      lo = probe;
    } else {
      if (probe === afterExclusiveMs) return null;
      hi = probe;
      distance *= 2;
    }
  }
  // Cron slots are whole seconds, so a window (lo, hi] no longer than a second holds at
  // most one of them: the first slot after lo is then the last one at or before atMs.
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2);
    if (landsBefore(mid) !== null) lo = mid;
    else hi = mid;
  }
  return landsBefore(lo);
}

/**
 * Up to `max` slots in (afterExclusiveMs, atMs], the latest ones, in descending order.
 * Costs O(max) for interval schedules and about two croner steps per slot for regular
 * cron schedules.
 */
export function walkBackward(schedule: Schedule, atMs: number, afterExclusiveMs: number, max: number): number[] {
  const out: number[] = [];
  const limit = Math.max(0, Math.floor(max));
  if (schedule.kind === 'interval') {
    const anchorMs = intervalAnchorMs(schedule);
    const every = schedule.everyMs;
    const kLast = gridIndexAtOrBefore(anchorMs, every, atMs);
    const kFirst = gridIndexAtOrBefore(anchorMs, every, afterExclusiveMs) + 1;
    for (let k = kLast; k >= kFirst && out.length < limit; k--) out.push(anchorMs + k * every);
    return out;
  }
  let at = atMs;
  let hint: number | undefined;
  while (out.length < limit) {
    const slot = lastSlotAtOrBefore(schedule, at, afterExclusiveMs, hint);
    if (slot === null) break;
    const previous = out[out.length - 1];
    if (previous !== undefined) hint = previous - slot;
    out.push(slot);
    at = slot - 1;
  }
  return out;
}
