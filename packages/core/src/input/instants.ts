import { InvalidInputError } from '../errors';

/**
 * The one check of every instant that comes from outside (a filter's `from` and `to`, a
 * backfill's range, a cursor's position) before any store compares against it.
 * JavaScript's Date reads `2026-02-30` as March 2 and holds years PostgreSQL refuses (year
 * 0, negative years, years past 9999 in ISO text), which reached a statement and failed it.
 * An instant is accepted only when its text names a date that exists and it lies within
 * years 1 to 9999, which both PostgreSQL and ISO 8601's four-digit years hold.
 */

// Date.UTC maps years 0 to 99 to 1900 to 1999, so the first instant of year 1 is set by hand.
const FIRST_MS = (() => {
  const d = new Date(0);
  d.setUTCFullYear(1, 0, 1);
  return d.getTime();
})();

/** The earliest and latest instants accepted, in ms since the epoch: 0001-01-01T00:00:00Z and the last millisecond of 9999. */
export const INSTANT_RANGE = { min: FIRST_MS, max: Date.UTC(9999, 11, 31, 23, 59, 59, 999) } as const;

/** An ISO 8601 instant with a zone: date, hours and minutes, optional seconds and fraction. */
const ISO_INSTANT = /^(\d{4})-(\d\d)-(\d\d)T(\d\d):(\d\d)(?::(\d\d)(\.\d{1,9})?)?(Z|([+-])(\d\d):(\d\d))$/;

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return month === 2 && leap ? 29 : DAYS_IN_MONTH[month - 1]!;
}

/** Why a date cannot be stored or compared as an instant, or null if it can. */
export function instantProblem(at: Date): string | null {
  if (!(at instanceof Date) || Number.isNaN(at.getTime())) return 'must be a valid instant';
  if (at.getTime() < INSTANT_RANGE.min || at.getTime() > INSTANT_RANGE.max) return 'must be an instant from year 1 to year 9999';
  return null;
}

/** Why a text is not an instant this product accepts, or null: ISO 8601 with a zone, a date that exists, years 1 to 9999. */
export function instantTextProblem(text: string): string | null {
  const m = ISO_INSTANT.exec(text);
  if (m === null) return 'must be an instant such as 2026-01-31T09:00:00Z';
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return `names no such date (${m[1]}-${m[2]}-${m[3]})`;
  if (hour > 23 || minute > 59 || second > 59) return 'names no such time of day';
  if (m[8] !== 'Z' && (Number(m[10]) > 15 || Number(m[11]) > 59)) return 'has a zone offset no place has';
  return instantProblem(new Date(text));
}

/** The instant a text names, or InvalidInputError naming `field`. */
export function parseInstant(text: string, field: string): Date {
  const problem = instantTextProblem(text);
  if (problem !== null) throw new InvalidInputError(`${field}: ${problem}`, { field });
  return new Date(text);
}

/** Throws InvalidInputError naming `field` when a date cannot be stored as an instant. */
export function checkInstant(at: Date, field: string): Date {
  const problem = instantProblem(at);
  if (problem !== null) throw new InvalidInputError(`${field}: ${problem}`, { field });
  return at;
}
