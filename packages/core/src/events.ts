/**
 * The typed lifecycle events. One source feeds the structured logs, the metrics, the
 * event log in the store (and through it the console) and the simulator's checker.
 */
export const EVENT_TYPES = [
  'leader:elected',
  'leader:renewed',
  'leader:deposed',
  'leader:released',
  'run:created',
  'run:started',
  'run:finished',
  'job:ready',
  'job:capped',
  'lease:granted',
  'lease:renewed',
  'lease:expired',
  'lease:released',
  'job:succeeded',
  'job:failed',
  'job:retrying',
  'job:upstream_failed',
  'write:fenced',
  'worker:registered',
  'worker:gone',
  'backfill:started',
  'backfill:advanced',
  'backfill:done',
  'backfill:cancelled',
  // A node's view of its store, for the console's shard view: an outage began or ended, or
  // its result writes stalled or moved again. Written when the node next reaches the store.
  'store:unavailable',
  'store:available',
  'store:writes-stalled',
  'store:writes-moving',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
