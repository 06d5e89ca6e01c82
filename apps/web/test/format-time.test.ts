import { describe, expect, test } from 'vitest';
import { formatTime, scheduleZone, zoneLabel } from '@/components/format';

// The browser's zone is the process's here: fixed, so 'local' means the same on every machine.
process.env.TZ = 'Europe/Berlin';

const WINTER = new Date('2026-12-02T14:05:03Z');
const SUMMER = new Date('2026-07-02T14:05:03Z');

describe('formatTime', () => {
  test('UTC: year first, 24-hour, labelled UTC', () => {
    expect(formatTime(WINTER, 'UTC')).toBe('2026-12-02 14:05:03 UTC');
    expect(formatTime(new Date('2026-12-02T23:59:59Z'), 'UTC')).toBe('2026-12-02 23:59:59 UTC');
  });

  test('midnight is 00, never 24 or 12', () => {
    expect(formatTime(new Date('2026-12-03T00:00:07Z'), 'UTC')).toBe('2026-12-03 00:00:07 UTC');
    expect(formatTime(new Date('2026-12-02T12:30:00Z'), 'UTC')).toBe('2026-12-02 12:30:00 UTC');
  });

  test("local is the browser's zone, with its abbreviation in winter and in summer", () => {
    expect(formatTime(WINTER, 'local')).toBe('2026-12-02 15:05:03 CET');
    expect(formatTime(SUMMER, 'local')).toBe('2026-07-02 16:05:03 CEST');
  });

  test("a DAG's own zone, American and European abbreviations both", () => {
    expect(formatTime(WINTER, 'America/New_York')).toBe('2026-12-02 09:05:03 EST');
    expect(formatTime(SUMMER, 'America/New_York')).toBe('2026-07-02 10:05:03 EDT');
    expect(formatTime(SUMMER, 'Europe/London')).toBe('2026-07-02 15:05:03 BST');
    expect(formatTime(WINTER, 'Europe/London')).toBe('2026-12-02 14:05:03 GMT');
  });

  test('a zone without a common abbreviation is labelled by its offset from UTC', () => {
    expect(formatTime(WINTER, 'Asia/Kolkata')).toBe('2026-12-02 19:35:03 UTC+5:30');
    expect(formatTime(WINTER, 'Asia/Tokyo')).toBe('2026-12-02 23:05:03 UTC+9');
  });

  test('the date follows the zone across midnight', () => {
    expect(formatTime(new Date('2026-12-02T23:30:00Z'), 'local')).toBe('2026-12-03 00:30:00 CET');
    expect(formatTime(new Date('2026-12-02T02:00:00Z'), 'America/New_York')).toBe('2026-12-01 21:00:00 EST');
  });

  test('shorter forms keep the zone', () => {
    expect(formatTime(WINTER, 'UTC', 'time')).toBe('14:05:03 UTC');
    expect(formatTime(WINTER, 'local', 'minutes')).toBe('15:05 CET');
  });

  test('strings and epoch numbers are read like dates; nothing and nonsense show a dash', () => {
    expect(formatTime('2026-12-02T14:05:03.000Z', 'UTC')).toBe('2026-12-02 14:05:03 UTC');
    expect(formatTime(WINTER.getTime(), 'UTC')).toBe('2026-12-02 14:05:03 UTC');
    expect(formatTime(null, 'UTC')).toBe('–');
    expect(formatTime(undefined, 'UTC')).toBe('–');
    expect(formatTime('not a time', 'UTC')).toBe('–');
  });

  test('a zone the browser does not know falls back to UTC, labelled so', () => {
    expect(formatTime(WINTER, 'Mars/Olympus_Mons')).toBe('2026-12-02 14:05:03 UTC');
  });
});

describe('zoneLabel and scheduleZone', () => {
  test('labels', () => {
    expect(zoneLabel(WINTER, 'UTC')).toBe('UTC');
    expect(zoneLabel(WINTER, 'Etc/UTC')).toBe('UTC');
    expect(zoneLabel(WINTER, 'Europe/Berlin')).toBe('CET');
    expect(zoneLabel(WINTER, 'America/Sao_Paulo')).toBe('UTC-3');
  });

  test("a cron is in its own zone (UTC when it names none); other schedules have none and follow the viewer's choice", () => {
    expect(scheduleZone({ kind: 'cron', cron: '0 9 * * *', timezone: 'America/New_York' })).toBe('America/New_York');
    expect(scheduleZone({ kind: 'cron', cron: '0 9 * * *' })).toBe('UTC');
    expect(scheduleZone({ kind: 'interval', everyMs: 60_000 })).toBeNull();
    expect(scheduleZone({ kind: 'manual' })).toBeNull();
  });
});
