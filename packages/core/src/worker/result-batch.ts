import { utf8ByteLength } from '../dag/validate';
import type { FailureToSend, ResultToSend } from './protocol';

/** Results per completeMany request, and the request body they may fill (a node accepts 1 MiB). */
export const RESULT_BATCH_LIMITS = { maxResults: 500, maxBytes: 512 * 1024 } as const;

export interface BatchLimits {
  maxResults: number;
  maxBytes: number;
}

/** Room for a result's ids, fence and JSON punctuation beside its output and logs. */
const ENVELOPE_BYTES = 200;

/** About how many bytes a result adds to a request body. */
export function resultBytes(result: ResultToSend): number {
  const effects = result.effects ? utf8ByteLength(JSON.stringify(result.effects)) : 0;
  return utf8ByteLength(JSON.stringify(result.output ?? null) ?? 'null') + utf8ByteLength(result.logs ?? '') + effects + ENVELOPE_BYTES;
}

/** About how many bytes a failure adds to a request body. */
export function failureBytes(failure: FailureToSend): number {
  const effects = failure.effects ? utf8ByteLength(JSON.stringify(failure.effects)) : 0;
  return utf8ByteLength(failure.error) + utf8ByteLength(failure.logs ?? '') + effects + ENVELOPE_BYTES;
}

/** What a hand-back adds to a request body: its ids, fence and reason. */
export const RELEASE_BYTES = ENVELOPE_BYTES;

/**
 * How many of the queued results, from the front, go in the next request: as many as fit
 * both limits, and always at least one, so a single result larger than the byte limit
 * still goes out (alone) and the node answers it with its own refusal.
 */
export function nextBatchSize(bytes: readonly number[], limits: BatchLimits = RESULT_BATCH_LIMITS): number {
  let total = 0;
  let n = 0;
  while (n < bytes.length && n < limits.maxResults && (n === 0 || total + bytes[n]! <= limits.maxBytes)) total += bytes[n++]!;
  return n;
}
