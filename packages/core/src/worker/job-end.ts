import type { JobEnd } from './protocol';

export interface JobFailure {
  error: string;
  retryable: boolean;
}

/**
 * The failure to record for a job's end, or null for a success. A job that was stopped
 * (lease lost, timed out, handed back) reports why it was stopped, unless the handler's
 * error already says so in more detail (it keeps the stop's reason as its cause, as the
 * http handler does); a handler that returned after its stop still failed.
 */
export function failureOf(end: JobEnd, signal: Pick<AbortSignal, 'aborted' | 'reason'>): JobFailure | null {
  const stop: unknown = signal.aborted ? signal.reason : undefined;
  if (end.ok) return stop === undefined ? null : { error: message(stop), retryable: true };
  const err = end.error;
  const reason = stop !== undefined && !(err instanceof Error && err.cause === stop) ? stop : err;
  return { error: message(reason), retryable: end.retryable };
}

function message(reason: unknown): string {
  return reason instanceof Error ? reason.message : String(reason);
}
