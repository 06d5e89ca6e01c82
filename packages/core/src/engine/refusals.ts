import { FencelineError, LeaseLostError } from '../errors';
import type { JobId } from '../ids';

/**
 * What a worker is told when a write for a lease is refused, and what the operator is
 * told. The store classifies a refusal precisely (stale, forged, no such job, a lease
 * that ended or expired, held by another worker, granted to another session), and the
 * node puts that reason in the event log (`write:fenced`) and the metrics
 * (`writes_refused_total{reason=...}`). The worker gets one answer whatever the reason,
 * naming only what it sent: the job id, the fence and the operation. Telling it the
 * holder or the fence on record would hand a caller what it needs to write as someone
 * else, and telling stale from forged would let it search for the current fence.
 */

/** The codes of a refused fenced write; any other typed error is about the request itself. */
const FENCED_CODES = new Set(['STALE_FENCE', 'FORGED_FENCE', 'LEASE_LOST', 'NOT_FOUND']);

export function isFencedRefusal(err: FencelineError): boolean {
  return FENCED_CODES.has(err.code);
}

/** The reason label for the event log and the metrics: the code, or the cause of a lost lease. */
export function refusalReason(err: FencelineError): string {
  return reasonOf(err.code, err.details.cause);
}

/** The reason label for a refusal's code and, for LEASE_LOST, its cause. */
export function reasonOf(code: string, cause: unknown): string {
  if (code !== 'LEASE_LOST') return code;
  if (cause === 'foreign-holder') return 'FOREIGN_HOLDER';
  if (cause === 'old-session') return 'OLD_SESSION';
  return 'LEASE_LOST';
}

/** The one answer a worker gets for a refused write: about its own request, nothing else. */
export function workerRefusal(operation: string, jobId: JobId, fence: number): LeaseLostError {
  return new LeaseLostError(`${operation} refused: this worker holds no live lease on job ${jobId} with fence ${fence}`, { jobId, fence, operation });
}

/** The answer for any typed error: fenced refusals made anonymous, the rest as they are. */
export function answerFor(err: FencelineError, operation: string, jobId: JobId, fence: number): FencelineError {
  return isFencedRefusal(err) ? workerRefusal(operation, jobId, fence) : err;
}
