import { describe, expect, it } from 'vitest';
import { planTick, CRON_COUNT_CAP } from '../src/schedule/tick';
import { slotsBetween } from '../src/schedule/slots';
import type { CatchupPolicy, Schedule } from '../src/spec';

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const T = Date.parse('2024-05-01T00:00:00Z');
const everyMinute: Schedule = { kind: 'interval', everyMs: MIN };
const all = (windowMs = DAY): CatchupPolicy => ({ policy: 'all', windowMs });
const latest: CatchupPolicy = { policy: 'latest', windowMs: DAY };
const none: CatchupPolicy = { policy: 'none', windowMs: DAY };
const range = (from: number, count: number, step: number) => Array.from({ length: count }, (_, i) => from + i * step);

describe('tick planning', () => {
  it('does nothing before the next run is due', () => {
    expect(planTick({ schedule: everyMinute, catchup: all(), nextRunAtMs: T, nowMs: T - 1 })).toEqual({ slotsMs: [], nextRunAtMs: T, skipped: 0, skippedExact: true });
  });

  it('runs the due slot on time under every policy and moves to the next one', () => {
    for (const catchup of [all(), latest, none]) {
      expect(planTick({ schedule: everyMinute, catchup, nextRunAtMs: T, nowMs: T + 500 })).toEqual({ slotsMs: [T], nextRunAtMs: T + MIN, skipped: 0, skippedExact: true });
    }
  });

  it('catch-up "all" runs every slot missed during an outage', () => {
    const plan = planTick({ schedule: everyMinute, catchup: all(), nextRunAtMs: T, nowMs: T + 10 * MIN + 5_000 });
    expect(plan).toEqual({ slotsMs: range(T, 11, MIN), nextRunAtMs: T + 11 * MIN, skipped: 0, skippedExact: true });
  });

  it('catch-up "all" skips slots older than its window', () => {
    const plan = planTick({ schedule: everyMinute, catchup: all(5 * MIN), nextRunAtMs: T, nowMs: T + 10 * MIN + 5_000 });
    expect(plan.slotsMs).toEqual(range(T + 6 * MIN, 5, MIN));
    expect(plan.skipped).toBe(6);
  });

  it('catch-up "all" keeps the most recent slots when more than maxRuns are due', () => {
    const plan = planTick({ schedule: everyMinute, catchup: all(), nextRunAtMs: T, nowMs: T + 10 * MIN, maxRuns: 3 });
    expect(plan.slotsMs).toEqual([T + 8 * MIN, T + 9 * MIN, T + 10 * MIN]);
    expect(plan.skipped).toBe(8);
  });

  it('catch-up "latest" runs only the most recent missed slot', () => {
    const plan = planTick({ schedule: everyMinute, catchup: latest, nextRunAtMs: T, nowMs: T + 10 * MIN + 5_000 });
    expect(plan).toEqual({ slotsMs: [T + 10 * MIN], nextRunAtMs: T + 11 * MIN, skipped: 10, skippedExact: true });
  });

  it('catch-up "none" runs the latest slot only while it is within the grace period', () => {
    const recent = planTick({ schedule: everyMinute, catchup: none, nextRunAtMs: T, nowMs: T + 10 * MIN + 5_000 });
    expect(recent.slotsMs).toEqual([T + 10 * MIN]);
    expect(recent.skipped).toBe(10);
    const daily: Schedule = { kind: 'cron', cron: '0 2 * * *', timezone: 'UTC' };
    const slot = Date.parse('2024-05-01T02:00:00Z');
    const late = planTick({ schedule: daily, catchup: none, nextRunAtMs: slot, nowMs: slot + 3 * HOUR, lateGraceMs: 2 * MIN });
    expect(late).toEqual({ slotsMs: [], nextRunAtMs: slot + DAY, skipped: 1, skippedExact: true });
  });

  it('runs a due next_run_at that is not a slot of the current schedule', () => {
    const plan = planTick({ schedule: everyMinute, catchup: all(), nextRunAtMs: T + 30_000, nowMs: T + 2 * MIN });
    expect(plan.slotsMs).toEqual([T + 30_000, T + MIN, T + 2 * MIN]);
  });

  it('a manual DAG with a due next_run_at runs it once and has no next run', () => {
    expect(planTick({ schedule: { kind: 'manual' }, catchup: latest, nextRunAtMs: T, nowMs: T + 1 })).toEqual({ slotsMs: [T], nextRunAtMs: null, skipped: 0, skippedExact: true });
  });

  it('a one-second interval after a month of outage is planned arithmetically, quickly', () => {
    const schedule: Schedule = { kind: 'interval', everyMs: 1_000 };
    const outage = 30 * DAY;
    const started = performance.now();
    const plan = planTick({ schedule, catchup: all(30 * DAY), nextRunAtMs: T, nowMs: T + outage });
    expect(performance.now() - started).toBeLessThan(100);
    expect(plan.slotsMs).toEqual(range(T + outage - 999_000, 1_000, 1_000));
    expect(plan.skipped).toBe(outage / 1_000 + 1 - 1_000);
    expect(plan.nextRunAtMs).toBe(T + outage + 1_000);
    const last = planTick({ schedule, catchup: latest, nextRunAtMs: T, nowMs: T + outage });
    expect(last).toEqual({ slotsMs: [T + outage], nextRunAtMs: T + outage + 1_000, skipped: outage / 1_000, skippedExact: true });
  });

  it('a per-second cron after a month of outage is planned without walking every slot', () => {
    const schedule: Schedule = { kind: 'cron', cron: '* * * * * *', timezone: 'UTC' };
    const now = T + 30 * DAY + 500;
    const started = performance.now();
    const last = planTick({ schedule, catchup: latest, nextRunAtMs: T, nowMs: now });
    expect(last.slotsMs).toEqual([T + 30 * DAY]);
    expect(last.nextRunAtMs).toBe(T + 30 * DAY + 1_000);
    expect(last.skippedExact).toBe(false);
    expect(last.skipped).toBeGreaterThanOrEqual(CRON_COUNT_CAP);
    const every = planTick({ schedule, catchup: all(30 * DAY), nextRunAtMs: T, nowMs: now, maxRuns: 1_000 });
    expect(every.slotsMs).toEqual(range(T + 30 * DAY - 999_000, 1_000, 1_000));
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('a cron catch-up past the counting cap keeps the same slots as a full walk would', () => {
    const schedule: Schedule = { kind: 'cron', cron: '*/2 * * * * *', timezone: 'Europe/Berlin' };
    const now = T + 40 * MIN + 700;
    const dueAfterT = slotsBetween(schedule, T, now, 1e6);
    const truth = [T, ...dueAfterT];
    expect(truth.length).toBeGreaterThan(CRON_COUNT_CAP);
    const plan = planTick({ schedule, catchup: all(30 * MIN), nextRunAtMs: T, nowMs: now, maxRuns: 200 });
    const expected = truth.filter((s) => s >= now - 30 * MIN).slice(-200);
    expect(plan.slotsMs).toEqual(expected);
    expect(plan.skipped).toBeLessThanOrEqual(truth.length - expected.length);
    const latestPlan = planTick({ schedule, catchup: latest, nextRunAtMs: T, nowMs: now });
    expect(latestPlan.slotsMs).toEqual([truth[truth.length - 1]]);
  });

  it('a cron in a time zone catches up slot by slot when the count is small', () => {
    const schedule: Schedule = { kind: 'cron', cron: '0 * * * *', timezone: 'America/New_York' };
    const plan = planTick({ schedule, catchup: all(), nextRunAtMs: T, nowMs: T + 5 * HOUR + 1 });
    expect(plan).toEqual({ slotsMs: range(T, 6, HOUR), nextRunAtMs: T + 6 * HOUR, skipped: 0, skippedExact: true });
  });
});
