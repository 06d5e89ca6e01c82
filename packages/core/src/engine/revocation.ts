import type { SweptJob } from '../store';

/**
 * Why a lease ended without a result, in words, for the event log (and through it the
 * console's run timeline and worker page). Each text states what is known, so an
 * operator reading it is not sent after a cause that did not happen.
 */

/** Why a worker gave a job back, as it says in its release call. */
export type ReleaseCause = 'stopping' | 'no-free-slot';

export const RELEASE_REASONS = {
  stopping: 'released on stop: its worker handed it back while stopping',
  'no-free-slot': 'handed back: its worker had no free slot for it',
  /** A worker that gave no reason (one of an older release). */
  unspecified: 'handed back by its worker',
  unclaimed: 'undelivered: its worker did not come back for the lease',
  leftPool: 'undelivered: its worker left the pool before the grant',
  hungUp: 'undelivered: its worker hung up before the answer reached it',
  nodeStopped: 'undelivered: the scheduler node stopped before its worker came back for the lease',
} as const;

export function releaseReason(cause: ReleaseCause | undefined): string {
  return RELEASE_REASONS[cause ?? 'unspecified'];
}

/**
 * The reason of a revocation by the sweeper. `holderGone` says whether the holder has
 * left the pool, as this node sees it (see SchedulerNode's holderGone): a live worker
 * that held the lease would have renewed it, so a lease that expired unrenewed while its
 * holder stayed in the pool was most likely never delivered, and only then is that said.
 */
export function sweepReason(s: Pick<SweptJob, 'previousHolder' | 'renewed' | 'attemptCounted'>, holderGone: boolean): string {
  const holder = s.previousHolder ?? 'an unknown worker';
  const counted = s.attemptCounted ? '' : '; the attempt is not counted';
  if (s.renewed) {
    return holderGone
      ? `holder gone: ${holder} renewed the lease, then dropped out of the pool (stopped, crashed or cut off)${counted}`
      : `expired after renewals: not renewed within the TTL while ${holder} stayed in the pool (paused, or its renewals did not arrive)${counted}`;
  }
  return holderGone
    ? `holder gone: ${holder} is not in the pool (stopped, crashed or cut off) and never renewed the lease${counted}`
    : `never renewed while ${holder} stayed in the pool (most likely never delivered)${counted}`;
}
