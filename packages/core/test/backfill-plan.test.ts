import { describe, expect, it } from 'vitest';
import { checkBackfillStep, nextBackfillSlots, planBackfill } from '../src/backfill/plan';
import type { FencelineError } from '../src/errors';
import { parseBackfillId } from '../src/ids';
import { DEFAULTS, LIMITS } from '../src/limits';
import type { Schedule } from '../src/spec';

const HOUR_MS = 3_600_000;
const hourly: Schedule = { kind: 'interval', everyMs: HOUR_MS };
const FROM = Date.parse('2026-01-01T00:00:00Z');
const request = (fromMs: number, toMs: number, extra: Partial<Parameters<typeof planBackfill>[0]> = {}) => ({
  dagId: 'd',
  from: new Date(fromMs),
  to: new Date(toMs),
  requestedBy: 'ops',
  ...extra,
});

function refusal(fn: () => unknown): FencelineError {
  try {
    fn();
  } catch (err) {
    return err as FencelineError;
  }
  throw new Error('expected a refusal');
}

describe('planBackfill', () => {
  it('counts the slots of [from, to): from included, to left out', () => {
    const plan = planBackfill(request(FROM, FROM + 30 * 24 * HOUR_MS, { confirm: true }), hourly);
    expect(plan).toMatchObject({ totalSlots: 720, firstSlotMs: FROM, maxActiveRuns: DEFAULTS.backfillMaxActiveRuns, mode: 'skip' });
    // A range between two slots starts at the next one.
    expect(planBackfill(request(FROM + 1, FROM + 3 * HOUR_MS), hourly)).toMatchObject({ totalSlots: 2, firstSlotMs: FROM + HOUR_MS });
  });

  it('counts cron slots in their time zone', () => {
    const nine: Schedule = { kind: 'cron', cron: '0 9 * * *', timezone: 'Europe/Paris' };
    const plan = planBackfill(request(FROM, FROM + 7 * 24 * HOUR_MS), nine);
    expect(plan.totalSlots).toBe(7);
    expect(new Date(plan.firstSlotMs).toISOString()).toBe('2026-01-01T08:00:00.000Z');
  });

  it('asks for confirmation above the limit, and refuses above the hard limit even when confirmed', () => {
    const overConfirm = request(FROM, FROM + (LIMITS.backfillConfirmSlots + 1) * HOUR_MS);
    expect(refusal(() => planBackfill(overConfirm, hourly)).details).toMatchObject({ field: 'confirm', slots: LIMITS.backfillConfirmSlots + 1 });
    expect(planBackfill({ ...overConfirm, confirm: true }, hourly).totalSlots).toBe(LIMITS.backfillConfirmSlots + 1);
    const overHard = request(FROM, FROM + (LIMITS.maxBackfillSlots + 1) * HOUR_MS, { confirm: true });
    expect(refusal(() => planBackfill(overHard, hourly)).details).toMatchObject({ field: 'to', limit: LIMITS.maxBackfillSlots });
  });

  it('names the field of every other refusal', () => {
    const cases: [ReturnType<typeof request>, Schedule, string][] = [
      [request(FROM, FROM), hourly, 'to'],
      [request(NaN, FROM), hourly, 'from'],
      [request(FROM, FROM + HOUR_MS), { kind: 'manual' }, 'dagId'],
      [request(FROM, FROM + HOUR_MS, { maxActiveRuns: 1.5 }), hourly, 'maxActiveRuns'],
      [request(FROM, FROM + HOUR_MS, { mode: 'rerun' }), hourly, 'mode'],
      [request(FROM, FROM + HOUR_MS, { mode: 'again' as never }), hourly, 'mode'],
      [request(FROM, FROM + HOUR_MS, { requestedBy: '' }), hourly, 'requestedBy'],
    ];
    for (const [input, schedule, field] of cases) {
      const err = refusal(() => planBackfill(input, schedule));
      expect(err.code, err.message).toBe('INVALID_INPUT');
      expect(err.details.field).toBe(field);
    }
  });
});

describe('nextBackfillSlots', () => {
  const to = FROM + 10 * HOUR_MS;
  it('gives at most `room` slots from the next one and where to go on from', () => {
    expect(nextBackfillSlots({ schedule: hourly, nextSlotMs: FROM, toMs: to, room: 3 })).toEqual({
      slotsMs: [FROM, FROM + HOUR_MS, FROM + 2 * HOUR_MS],
      nextSlotMs: FROM + 3 * HOUR_MS,
    });
  });

  it('ends with a null next slot at the last slot of the range, which is left out at `to`', () => {
    expect(nextBackfillSlots({ schedule: hourly, nextSlotMs: FROM + 8 * HOUR_MS, toMs: to, room: 5 })).toEqual({
      slotsMs: [FROM + 8 * HOUR_MS, FROM + 9 * HOUR_MS],
      nextSlotMs: null,
    });
    expect(nextBackfillSlots({ schedule: hourly, nextSlotMs: FROM + 8 * HOUR_MS, toMs: to, room: 2 })).toEqual({
      slotsMs: [FROM + 8 * HOUR_MS, FROM + 9 * HOUR_MS],
      nextSlotMs: null,
    });
  });

  it('stays where it is with no room', () => {
    expect(nextBackfillSlots({ schedule: hourly, nextSlotMs: FROM, toMs: to, room: 0 })).toEqual({ slotsMs: [], nextSlotMs: FROM });
  });
});

describe('checkBackfillStep', () => {
  const backfillId = parseBackfillId('1');
  it('refuses slots out of order or too many, and takes an ascending list', () => {
    const at = (h: number) => new Date(FROM + h * HOUR_MS);
    expect(() => checkBackfillStep({ backfillId, expectedNextSlotAt: at(0), slots: [at(0), at(1)], nextSlotAt: at(2) })).not.toThrow();
    expect(refusal(() => checkBackfillStep({ backfillId, expectedNextSlotAt: at(0), slots: [at(1), at(1)], nextSlotAt: null })).code).toBe('INVALID_INPUT');
    expect(refusal(() => checkBackfillStep({ backfillId, expectedNextSlotAt: at(0), slots: [new Date(NaN)], nextSlotAt: null })).code).toBe('INVALID_INPUT');
    const many = Array.from({ length: LIMITS.maxMaxActiveRuns + 1 }, (_, h) => at(h));
    expect(refusal(() => checkBackfillStep({ backfillId, expectedNextSlotAt: at(0), slots: many, nextSlotAt: null })).code).toBe('INVALID_INPUT');
  });
});
