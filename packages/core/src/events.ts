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
] as const;
export type EventType = (typeof EVENT_TYPES)[number];
