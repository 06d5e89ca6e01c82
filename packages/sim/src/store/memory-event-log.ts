import type { DagId, EventRow, JobId, RunId, WorkerId } from '@fenceline/core';
import type { NewEvent } from '@fenceline/core/store';
import { isId } from './memory-rows';

/** What listEvents filters on, as EventReadStore in @fenceline/core/testing has it. */
export interface EventQuery {
  afterId?: string;
  runId?: string;
  jobId?: string;
  type?: string;
  limit?: number;
}

/**
 * The memory store's event log: rows numbered in append order, ids that are not row ids
 * stored as null (as the SQL store's bigint columns would), and a cap on how many rows are
 * kept, because a simulated day of the mission load appends millions.
 */
export class MemoryEventLog {
  private rows: EventRow[] = [];
  private nextNum = 1;
  /** Batch keys on record, oldest first; as many are kept as the log keeps rows, since a writer sends a batch again soon after it lost the answer. */
  private batchKeys = new Set<string>();

  constructor(private readonly limit: number) {}

  /** `at` is the store's time, for events that come without a stamp of their own; a batch whose key is on record is not kept again. */
  append(events: NewEvent[], at: Date, batchKey?: string): void {
    if (batchKey !== undefined) {
      if (this.batchKeys.has(batchKey)) return;
      this.batchKeys.add(batchKey);
      if (this.batchKeys.size > this.limit) this.batchKeys = new Set([...this.batchKeys].slice(this.batchKeys.size - Math.ceil(this.limit / 2)));
    }
    for (const e of events) {
      this.rows.push({
        id: String(this.nextNum++),
        at: e.at ?? at,
        type: e.type,
        shard: e.shard ?? null,
        // The log keeps the ids it was given as they are, as the SQL store's columns do;
        // a run or job id that could not name a row is not kept.
        dagId: (e.dagId ?? null) as DagId | null,
        runId: e.runId != null && isId(e.runId) ? (e.runId as RunId) : null,
        jobId: e.jobId != null && isId(e.jobId) ? (e.jobId as JobId) : null,
        workerId: (e.workerId ?? null) as WorkerId | null,
        nodeId: e.nodeId ?? null,
        fence: e.fence ?? null,
        epoch: e.epoch ?? null,
        data: e.data ?? {},
      });
    }
    // Trim in large steps so the cost of dropping old rows stays amortised O(1).
    if (this.rows.length > this.limit * 1.5) this.rows = this.rows.slice(this.rows.length - this.limit);
  }

  /** After an id: the oldest matches past it; otherwise the newest matches, oldest first. */
  list(query: EventQuery): EventRow[] {
    const limit = Math.min(Math.max(query.limit ?? 100, 1), 10_000);
    const match = (e: EventRow): boolean =>
      (query.runId === undefined || (isId(query.runId) && e.runId === query.runId)) &&
      (query.jobId === undefined || (isId(query.jobId) && e.jobId === query.jobId)) &&
      (query.type === undefined || e.type === query.type);
    if (query.afterId !== undefined && isId(query.afterId)) {
      const after = Number(query.afterId);
      const out: EventRow[] = [];
      for (const e of this.rows) {
        if (Number(e.id) > after && match(e)) out.push(e);
        if (out.length >= limit) break;
      }
      return out.map((e) => ({ ...e }));
    }
    const out: EventRow[] = [];
    for (let i = this.rows.length - 1; i >= 0 && out.length < limit; i--) if (match(this.rows[i]!)) out.push(this.rows[i]!);
    return out.reverse().map((e) => ({ ...e }));
  }
}
