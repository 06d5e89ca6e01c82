import { InvalidInputError } from '../errors';
import { instantTextProblem, instantProblem } from '../input/instants';
import { sequenceIdProblem, type RunId } from '../ids';
import type { RunRow } from '../model';
import type { RunOrder, RunPage, RunPageQuery } from '../store/run-reads';
import { RUN_TRIGGERS } from '../model';

/**
 * Keyset paging of runs (RunReadStore.pageRuns). A page is read by its position in the
 * order (scheduled_at, id), never by an offset, so the millionth page costs what the first
 * does and a run inserted meanwhile neither repeats nor hides a run of the next page.
 *
 * The cursor names a position and a way from it: the runs after it in the page's order
 * (the next page) or the runs before it (the previous page). Its text is opaque to clients,
 * and a cursor that is not one a store gave out is refused as INVALID_INPUT naming the field.
 */

/** Every trigger a run may have, for filters: the scheduler's own and the operators' (model.ts). */
export const RUN_TRIGGER_NAMES = RUN_TRIGGERS;

/** Every state a run may have, for filters. */
export const RUN_STATE_NAMES: readonly RunRow['state'][] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

export const RUN_PAGE_DEFAULT_LIMIT = 50;
export const RUN_PAGE_MAX_LIMIT = 500;
export const RUN_CURSOR_MAX_LENGTH = 200;

/** A position in the order: the scheduled instant to the microsecond, as ISO text, and the run's id. */
export interface RunKey {
  /** `YYYY-MM-DDTHH:MM:SS.ffffffZ`: microseconds, since the store keeps them and a key must be exact. */
  scheduledAt: string;
  id: RunId;
}

export interface RunCursor {
  order: RunOrder;
  /** 'after': the runs that follow the key in the order (next page); 'before': those that precede it. */
  way: 'after' | 'before';
  key: RunKey;
}

const KEY_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;
const CURSOR_TEXT = /^[A-Za-z0-9_-]+$/;
const VERSION = 'r1';

function base64url(text: string): string {
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function unbase64url(text: string): string | null {
  try {
    return atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return null;
  }
}

export function encodeRunCursor(cursor: RunCursor): string {
  return base64url([VERSION, cursor.order, cursor.way, cursor.key.scheduledAt, cursor.key.id].join('|'));
}

function badCursor(why: string): InvalidInputError {
  return new InvalidInputError(`cursor: ${why}`, { field: 'cursor' });
}

/** Reads a cursor a store gave out; anything else is an InvalidInputError naming `cursor`. */
export function decodeRunCursor(text: string, order: RunOrder): RunCursor {
  if (text.length === 0 || text.length > RUN_CURSOR_MAX_LENGTH || !CURSOR_TEXT.test(text)) throw badCursor('is not a cursor this list gave out');
  const plain = unbase64url(text);
  const parts = plain?.split('|') ?? [];
  const [version, cursorOrder, way, scheduledAt, id] = parts;
  if (parts.length !== 5 || version !== VERSION || (way !== 'after' && way !== 'before') || (cursorOrder !== 'newest' && cursorOrder !== 'oldest')) {
    throw badCursor('is not a cursor this list gave out');
  }
  // Checked in full before use: a real date in the range a store holds, a run id, and
  // text that is exactly what encodeRunCursor writes for them (so no two texts name one
  // position, and nothing rides along in padding or spare bits).
  if (scheduledAt === undefined || !KEY_TIME.test(scheduledAt) || instantTextProblem(scheduledAt) !== null) throw badCursor('names no valid position');
  if (id === undefined || sequenceIdProblem(id) !== null) throw badCursor('names no valid position');
  const cursor: RunCursor = { order: cursorOrder, way, key: { scheduledAt, id: id as RunId } };
  if (encodeRunCursor(cursor) !== text) throw badCursor('is not a cursor this list gave out');
  if (cursorOrder !== order) throw badCursor(`was given out for the ${cursorOrder} first order, not ${order} first`);
  return cursor;
}

/** A JavaScript date as a key's time: memory stores keep milliseconds, so the microseconds are zero. */
export function runKeyTime(at: Date): string {
  return at.toISOString().replace('Z', '000Z');
}

/** A key's time in microseconds since the epoch (exact: about 1.7e15, well within 2^53), for stores that compare in JavaScript. */
export function runKeyMicros(scheduledAt: string): number {
  const micros = Number(scheduledAt.slice(23, 26));
  return Date.parse(scheduledAt) * 1000 + micros;
}

/** The page's limit, checked: a whole number from 1 to RUN_PAGE_MAX_LIMIT (default RUN_PAGE_DEFAULT_LIMIT). */
export function runPageLimit(query: RunPageQuery): number {
  const limit = query.limit ?? RUN_PAGE_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > RUN_PAGE_MAX_LIMIT) {
    throw new InvalidInputError(`limit: must be a whole number from 1 to ${RUN_PAGE_MAX_LIMIT}`, { field: 'limit' });
  }
  return limit;
}

/** Checks the filters' instants, so a store never compares against an invalid date. */
export function checkRunFilters(query: RunPageQuery): void {
  for (const field of ['scheduledFrom', 'scheduledBefore'] as const) {
    const at = query[field];
    const problem = at === undefined ? null : at instanceof Date ? instantProblem(at) : 'must be a valid instant';
    if (problem !== null) throw new InvalidInputError(`${field}: ${problem}`, { field });
  }
  if (query.state !== undefined && !RUN_STATE_NAMES.includes(query.state)) {
    throw new InvalidInputError(`state: must be one of ${RUN_STATE_NAMES.join(', ')}`, { field: 'state' });
  }
  if (query.trigger !== undefined && !(RUN_TRIGGER_NAMES as readonly string[]).includes(query.trigger)) {
    throw new InvalidInputError(`trigger: must be one of ${RUN_TRIGGER_NAMES.join(', ')}`, { field: 'trigger' });
  }
}

/**
 * Builds the page from what a store read: `fetched` holds up to limit + 1 runs, read in the
 * cursor's way from its key (so for 'before', nearest the key first), each with its exact
 * key. The extra run only tells that there is more in that way.
 */
export function assembleRunPage(input: { order: RunOrder; cursor: RunCursor | null; limit: number; fetched: { row: RunRow; key: RunKey }[] }): RunPage {
  const { order, cursor, limit } = input;
  const more = input.fetched.length > limit;
  const taken = input.fetched.slice(0, limit);
  const backwards = cursor?.way === 'before';
  if (backwards) taken.reverse();
  const first = taken[0];
  const last = taken[taken.length - 1];
  const hasNext = backwards ? cursor !== null : more;
  const hasPrevious = backwards ? more : cursor !== null;
  return {
    rows: taken.map((f) => f.row),
    next: hasNext && last ? encodeRunCursor({ order, way: 'after', key: last.key }) : null,
    previous: hasPrevious && first ? encodeRunCursor({ order, way: 'before', key: first.key }) : null,
  };
}
