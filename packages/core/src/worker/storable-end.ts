import { utf8ByteLength } from '../dag/limit-checks';
import { clipText, jsonProblem, replaceUnstorable } from '../input/free-form';
import { resultSizeRefusal } from '../input/worker-writes';
import { LIMITS } from '../limits';
import type { JobFailure } from './job-end';

/**
 * What a worker sends for a job's end, made storable before it is sent: the scheduler
 * refuses text PostgreSQL cannot keep (a NUL, a lone surrogate) and JSON nested past
 * LIMITS.maxJsonDepth, and a refused request would be sent again and again, holding up the
 * other results batched with it. Captured text (logs, an error's message) keeps everything
 * else, with each such character replaced by U+FFFD, and is clipped to what the protocol
 * takes (LIMITS.maxResultBytes characters of logs, LIMITS.maxErrorLength of an error); an
 * output, being data the job's readers rely on, is not altered: the job fails for good,
 * saying why.
 */

export type StorableEnd = { kind: 'success'; output: unknown; logs: string | null } | { kind: 'failure'; failure: JobFailure; logs: string | null };

/** The success or failure to send for a job, with its text made storable and an unstorable output turned into a failure. */
export function storableEnd(jobId: string, output: unknown, failure: JobFailure | null, logs: string | null): StorableEnd {
  const cleanLogs = logs === null ? null : clipText(replaceUnstorable(logs), LIMITS.maxResultBytes);
  if (failure) return { kind: 'failure', failure: { ...failure, error: clipText(replaceUnstorable(failure.error), LIMITS.maxErrorLength) }, logs: cleanLogs };
  const problem = jsonProblem(output, { maxDepth: LIMITS.maxJsonDepth, maxBytes: Number.POSITIVE_INFINITY });
  if (problem === null) {
    // The store refuses an output over LIMITS.maxOutputBytes, and sending it again would not
    // change that: the job fails for good, with the store's own words.
    const tooBig = resultSizeRefusal(jobId, utf8ByteLength(JSON.stringify(output ?? null)), 0);
    if (tooBig) return { kind: 'failure', failure: { error: tooBig.message, retryable: false }, logs: cleanLogs };
    return { kind: 'success', output, logs: cleanLogs };
  }
  const where = ['output', ...problem.path.map(String)].join('.');
  return { kind: 'failure', failure: { error: replaceUnstorable(`the job's output cannot be stored: ${where} ${problem.message}`), retryable: false }, logs: cleanLogs };
}
