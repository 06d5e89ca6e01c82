import type { EventRow } from '../model';

/** What a test filters the event log on. */
export interface EventQuery {
  afterId?: string;
  runId?: string;
  jobId?: string;
  type?: string;
  limit?: number;
}

/**
 * Reading the event log back, which only tests do: the console and the processes append
 * events and never list them, so this is not a role of the Store. Both stores implement it
 * (SqlStore and MemoryStore), and the store contract holds them to the same answers.
 */
export interface EventReadStore {
  /**
   * Events in id order. With `afterId` it tails the log forward from that id; without it,
   * it returns the latest `limit` events (100 by default), still in id order.
   */
  listEvents(query: EventQuery): Promise<EventRow[]>;
}
