import { ForgedFenceError, LeaseLostError, NotFoundError, StaleFenceError, type FencelineError } from '../errors';
import type { LeaseRef } from '../store/shared';

/** The job as a refused fenced write finds it, read by the store after the refusal. */
export interface FenceRecord {
  fence: number;
  holder: string | null;
  state: string;
  /** Whether the lease is still live in the store's clock. */
  live: boolean;
  /** The session the lease was granted to, and its holder's current session. */
  holderSession: string | null;
  currentSession: string | null;
}

/**
 * Why a fenced write was refused, classified from the job as it is now, the same in both
 * stores: no such job (NOT_FOUND); a lower fence than on record, so its lease was
 * superseded (STALE_FENCE); a higher one than was ever issued (FORGED_FENCE); or the right
 * fence on a lease it no longer holds (LEASE_LOST, `details.cause` saying which): the job
 * ended, another worker holds it, another session of this worker holds it, or the lease
 * expired. A live lease this holder and session still hold is refused only because the
 * result store already holds this fence or a higher one: its attempt has ended, so the
 * cause is `ended`. These precise reasons are for the node's event log and metrics; the
 * worker is answered without them (engine/refusals.ts).
 */
export function fencedWriteRefusal(ref: LeaseRef, record: FenceRecord | undefined, operation: string): FencelineError {
  const base = { jobId: ref.jobId, fence: ref.fence, workerId: ref.workerId, operation };
  if (!record) return new NotFoundError(`${operation} refused: job ${ref.jobId} does not exist`, { ...base, recordFence: null });
  const details = { ...base, recordFence: record.fence, holder: record.holder, state: record.state };
  if (ref.fence < record.fence) {
    return new StaleFenceError(`${operation} refused: fence ${ref.fence} of job ${ref.jobId} is stale (the record is at ${record.fence})`, details);
  }
  if (ref.fence > record.fence) {
    return new ForgedFenceError(`${operation} refused: fence ${ref.fence} of job ${ref.jobId} was never issued (the record is at ${record.fence})`, details);
  }
  const [cause, why] = lostCause(ref, record);
  return new LeaseLostError(`${operation} refused: worker ${ref.workerId} no longer holds job ${ref.jobId}: ${why}`, { ...details, cause });
}

/** The cause and words of a refusal with the fence on record. */
function lostCause(ref: LeaseRef, record: FenceRecord): [cause: string, why: string] {
  if (record.state !== 'leased') return ['ended', `the job is ${record.state}`];
  if (record.holder !== ref.workerId) return ['foreign-holder', `it is held by ${record.holder}`];
  const oldSession = ref.session !== null && (record.holderSession !== ref.session || record.currentSession !== ref.session);
  if (oldSession) return ['old-session', 'the lease belongs to another session of this worker'];
  if (record.live) return ['ended', 'the result store already holds a result for this fence'];
  return ['expired', 'the lease expired'];
}
