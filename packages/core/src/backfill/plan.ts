import { assert } from '../assert';
import { InvalidInputError } from '../errors';
import { instantProblem } from '../input/instants';
import { BACKFILL_MODES, type BackfillMode } from '../model';
import { DEFAULTS, LIMITS } from '../limits';
import type { Schedule } from '../spec';
import type { BackfillStep } from '../store/leader';
import { nextSlotAfter, walkForward } from '../schedule/slots';
import { requestFingerprintText } from '../request-keys';

/** A backfill request as an operator sends it (CatalogueStore.createBackfill). */
export interface BackfillRequest {
  dagId: string;
  from: Date;
  to: Date;
  /** Runs of the backfill queued or running at once; DEFAULTS.backfillMaxActiveRuns when left out. */
  maxActiveRuns?: number;
  mode?: BackfillMode;
  /** Required above LIMITS.backfillConfirmSlots slots. */
  confirm?: boolean;
  /** The console user or the CLI's OS user, for the row and the event log. */
  requestedBy: string;
  /**
   * The request's key, its owner and fingerprint (KeyedRequestOptions): the same request of
   * the DAG sent again by its owner with the key starts nothing and returns the backfill the
   * first one started; the key sent with another request is refused (KeyReusedError).
   */
  requestKey?: string;
  requestOwner?: string;
  requestFingerprint?: string;
}

/** What a store writes for an accepted request. */
export interface BackfillPlan {
  fromMs: number;
  toMs: number;
  maxActiveRuns: number;
  mode: BackfillMode;
  totalSlots: number;
  /** The first slot of the range: where the leader starts. */
  firstSlotMs: number;
  requestedBy: string;
}

function validDate(value: unknown, field: string): number {
  // The one check of instants (input/instants.ts): a date PostgreSQL can hold.
  const problem = value instanceof Date ? instantProblem(value) : 'must be a valid date';
  if (problem !== null) throw new InvalidInputError(`${field}: ${problem}`, { field });
  return (value as Date).getTime();
}

/**
 * Checks a backfill request against the DAG's schedule and counts its slots, before
 * anything is written. Every refusal is an InvalidInputError naming its field: a range
 * that is empty or backwards, a DAG without a cron or interval schedule, a limit out of
 * range, a range of more than LIMITS.backfillConfirmSlots slots without `confirm`, or of
 * more than LIMITS.maxBackfillSlots at all. Both stores call it, so they refuse alike.
 */
export function planBackfill(request: BackfillRequest, schedule: Schedule): BackfillPlan {
  const fromMs = validDate(request.from, 'from');
  const toMs = validDate(request.to, 'to');
  if (fromMs >= toMs) throw new InvalidInputError('to: must be after from', { field: 'to' });
  const maxActiveRuns = request.maxActiveRuns ?? DEFAULTS.backfillMaxActiveRuns;
  if (!Number.isInteger(maxActiveRuns) || maxActiveRuns < 1 || maxActiveRuns > LIMITS.maxMaxActiveRuns) {
    throw new InvalidInputError(`maxActiveRuns: must be an integer from 1 to ${LIMITS.maxMaxActiveRuns}`, { field: 'maxActiveRuns' });
  }
  const mode = request.mode ?? 'skip';
  if (!BACKFILL_MODES.includes(mode)) throw new InvalidInputError(`mode: must be one of ${BACKFILL_MODES.join(', ')}`, { field: 'mode' });
  const by = request.requestedBy;
  if (typeof by !== 'string' || by.length === 0 || by.length > LIMITS.maxNameLength) {
    throw new InvalidInputError(`requestedBy: must be 1 to ${LIMITS.maxNameLength} characters`, { field: 'requestedBy' });
  }
  if (schedule.kind === 'manual') throw new InvalidInputError(`dagId: DAG ${request.dagId} has no schedule to backfill`, { field: 'dagId' });
  // [from, to) in the slots' (exclusive, inclusive] terms: times are whole milliseconds.
  const walk = walkForward(schedule, fromMs - 1, toMs - 1, LIMITS.maxBackfillSlots);
  if (!walk.complete) {
    throw new InvalidInputError(`a backfill may cover at most ${LIMITS.maxBackfillSlots} slots`, { field: 'to', limit: LIMITS.maxBackfillSlots });
  }
  const totalSlots = walk.slots.length;
  if (totalSlots === 0) throw new InvalidInputError('to: the range holds no slot of the schedule', { field: 'to' });
  if (totalSlots > LIMITS.backfillConfirmSlots && request.confirm !== true) {
    throw new InvalidInputError(`confirm: a backfill of ${totalSlots} slots (more than ${LIMITS.backfillConfirmSlots}) needs confirmation`, {
      field: 'confirm',
      slots: totalSlots,
      limit: LIMITS.backfillConfirmSlots,
    });
  }
  return { fromMs, toMs, maxActiveRuns, mode, totalSlots, firstSlotMs: walk.slots[0]!, requestedBy: by };
}

/** The next slots a leader creates for a backfill, and where it resumes after them. */
export interface BackfillSlots {
  slotsMs: number[];
  /** The slot after the last of `slotsMs`, or null when that was the last slot of the range. */
  nextSlotMs: number | null;
}

/**
 * Up to `room` slots from `nextSlotMs` (a slot of the schedule, included) to `toMs`
 * (excluded). With no room the backfill stays where it is.
 */
export function nextBackfillSlots(input: { schedule: Schedule; nextSlotMs: number; toMs: number; room: number }): BackfillSlots {
  const { schedule, nextSlotMs, toMs } = input;
  const room = Math.max(0, Math.floor(input.room));
  if (room === 0 || nextSlotMs >= toMs) return { slotsMs: [], nextSlotMs: nextSlotMs >= toMs ? null : nextSlotMs };
  const walk = walkForward(schedule, nextSlotMs - 1, toMs - 1, room);
  if (walk.complete) return { slotsMs: walk.slots, nextSlotMs: null };
  const last = walk.slots[walk.slots.length - 1];
  assert(last !== undefined, 'an incomplete walk returned at least one slot');
  const following = nextSlotAfter(schedule, last);
  return { slotsMs: walk.slots, nextSlotMs: following !== null && following < toMs ? following : null };
}

/**
 * Refuses a leader's backfill step whose slots are not valid dates in strictly ascending
 * order, or more than LIMITS.maxMaxActiveRuns (the highest limit a backfill may have).
 * Both stores call it before anything is written.
 */
export function checkBackfillStep(step: BackfillStep): void {
  if (step.slots.length > LIMITS.maxMaxActiveRuns) {
    throw new InvalidInputError(`one backfill step may create at most ${LIMITS.maxMaxActiveRuns} runs`, { backfillId: step.backfillId, slots: step.slots.length });
  }
  step.slots.forEach((slot, i) => {
    const ms = slot instanceof Date ? slot.getTime() : NaN;
    if (Number.isNaN(ms) || (i > 0 && ms <= step.slots[i - 1]!.getTime())) {
      throw new InvalidInputError('backfill step slots must be valid dates in ascending order', { backfillId: step.backfillId });
    }
  });
}

/**
 * What a backfill request asks, for its key's fingerprint: its DAG, range, mode and cap, not
 * who asked, the key, or `confirm` (which only lets a large request through).
 */
export function backfillFingerprint(request: BackfillRequest): string {
  const instant = (v: unknown): unknown => (v instanceof Date ? v.getTime() : v);
  return requestFingerprintText('createBackfill', String(request.dagId), {
    from: instant(request.from),
    to: instant(request.to),
    maxActiveRuns: request.maxActiveRuns ?? DEFAULTS.backfillMaxActiveRuns,
    mode: request.mode ?? 'skip',
  });
}
