import { describe, expect, it } from 'vitest';
import { seededRandom } from '../src/clock';
import { firstSlot, lastSlotAtOrBefore, nextSlotAfter, slotsBetween, walkBackward } from '../src/schedule/slots';
import type { Schedule } from '../src/spec';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const at = (text: string) => Date.parse(text);

describe('schedule slots', () => {
  it('a manual schedule has no slots', () => {
    expect(nextSlotAfter({ kind: 'manual' }, 0)).toBeNull();
    expect(slotsBetween({ kind: 'manual' }, 0, 1e12, 10)).toEqual([]);
  });

  it('an interval schedule falls on the epoch grid by default, strictly after the given instant', () => {
    const everyMinute: Schedule = { kind: 'interval', everyMs: 60_000 };
    expect(nextSlotAfter(everyMinute, 90_000)).toBe(120_000);
    expect(nextSlotAfter(everyMinute, 120_000)).toBe(180_000);
    expect(firstSlot(everyMinute, 120_000)).toBe(120_000);
    expect(nextSlotAfter(everyMinute, -1)).toBe(0);
  });

  it('an interval schedule follows its anchor', () => {
    const s: Schedule = { kind: 'interval', everyMs: 60_000, anchor: '2024-01-01T00:00:30+02:00' };
    expect(iso(nextSlotAfter(s, at('2024-01-01T00:00:00Z')))).toBe('2024-01-01T00:00:30.000Z');
    expect(iso(nextSlotAfter(s, at('2024-01-01T00:00:30Z')))).toBe('2024-01-01T00:01:30.000Z');
    expect(slotsBetween(s, at('2024-01-01T00:00:00Z'), at('2024-01-01T00:03:30Z'), 10).map(iso)).toEqual([
      '2024-01-01T00:00:30.000Z',
      '2024-01-01T00:01:30.000Z',
      '2024-01-01T00:02:30.000Z',
      '2024-01-01T00:03:30.000Z',
    ]);
  });

  it('a cron slot is strictly after the given instant, to the second', () => {
    const s: Schedule = { kind: 'cron', cron: '* * * * *', timezone: 'UTC' };
    expect(nextSlotAfter(s, 60_000)).toBe(120_000);
    expect(nextSlotAfter(s, 59_999)).toBe(60_000);
    expect(firstSlot(s, 60_000)).toBe(60_000);
  });

  it('a daily cron in New York keeps local 02:00 across the spring DST change (03:00 on the day 02:00 does not exist)', () => {
    const s: Schedule = { kind: 'cron', cron: '0 2 * * *', timezone: 'America/New_York' };
    expect(slotsBetween(s, at('2024-03-08T00:00:00Z'), at('2024-03-12T00:00:00Z'), 10).map(iso)).toEqual([
      '2024-03-08T07:00:00.000Z', // 02:00 EST
      '2024-03-09T07:00:00.000Z',
      '2024-03-10T07:00:00.000Z', // the clocks jump 02:00 -> 03:00 EDT; the slot runs once, at 03:00 EDT
      '2024-03-11T06:00:00.000Z', // 02:00 EDT
    ]);
  });

  it('a daily cron in New York runs once on the autumn DST change', () => {
    const s: Schedule = { kind: 'cron', cron: '30 1 * * *', timezone: 'America/New_York' };
    expect(slotsBetween(s, at('2024-11-02T00:00:00Z'), at('2024-11-05T00:00:00Z'), 10).map(iso)).toEqual([
      '2024-11-02T05:30:00.000Z', // 01:30 EDT
      '2024-11-03T05:30:00.000Z', // 01:30 happens twice that night; only the first one is a slot
      '2024-11-04T06:30:00.000Z', // 01:30 EST
    ]);
  });

  it('lists at most max slots', () => {
    const s: Schedule = { kind: 'cron', cron: '* * * * * *', timezone: 'UTC' };
    expect(slotsBetween(s, 0, 1e9, 3)).toEqual([1_000, 2_000, 3_000]);
  });

  it('finds the latest slot before an instant, as a forward walk would', () => {
    const random = seededRandom(7);
    const schedules: Schedule[] = [
      { kind: 'cron', cron: '*/7 * * * *', timezone: 'UTC' },
      { kind: 'cron', cron: '0 9 * * 1-5', timezone: 'Europe/Berlin' },
      { kind: 'cron', cron: '15 */3 * * * *', timezone: 'UTC' },
      { kind: 'cron', cron: '0 2 * * *', timezone: 'America/New_York' },
      { kind: 'interval', everyMs: 45_000, anchor: '2024-01-01T00:00:07Z' },
    ];
    const base = at('2024-03-01T00:00:00Z');
    for (const s of schedules) {
      for (let n = 0; n < 8; n++) {
        const lower = base + Math.floor(random.next() * 20 * 86_400_000);
        const upper = lower + Math.floor(random.next() * 10 * 86_400_000);
        const all = slotsBetween(s, lower, upper, 100_000);
        expect(lastSlotAtOrBefore(s, upper, lower)).toBe(all.length > 0 ? all[all.length - 1] : null);
        expect(walkBackward(s, upper, lower, 5)).toEqual(all.slice(-5).reverse());
      }
    }
  });
});
