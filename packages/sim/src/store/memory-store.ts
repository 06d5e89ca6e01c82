import type { EventRow, ResultRow } from '@fenceline/core';
import type { Store } from '@fenceline/core/store';
import type { EventQuery } from './memory-event-log';
import { memoryRoles } from './memory-roles';
import { standardRules } from './memory-rules';
import type { MemJob, MemRun, MemShard } from './memory-rows';
import { MemoryTables, type MemoryRules } from './memory-tables';
import type { StoreObserver } from './records';

export type { MemJob, MemRun } from './memory-rows';
export type { MemoryRules } from './memory-tables';

export interface MemoryStoreOptions {
  /** The store's own clock in epoch milliseconds (the simulation's true time). */
  nowMs: () => number;
  /** Told of every write that lands, at the instant it lands (the invariant checker). */
  observer?: StoreObserver;
  /** How many event-log rows to keep; the oldest are dropped beyond it (a day of mission load logs millions). */
  eventLogLimit?: number;
  /**
   * Rules to break, for the tests that show the invariant checker notices: given the
   * standard rules, the ones to use instead. Every part of the store calls the rules
   * through the tables, so a broken rule is broken everywhere at once.
   */
  rules?: (standard: MemoryRules) => Partial<MemoryRules>;
}

/** The memory store: the Store, with what the simulator's checker and reports read beside it. */
export interface MemoryStore extends Store {
  /** Attaches the invariant checker (one observer at a time). */
  observe(observer: StoreObserver | undefined): void;
  allJobs(): IterableIterator<MemJob>;
  allRuns(): IterableIterator<MemRun>;
  jobById(jobId: string): MemJob | undefined;
  resultOf(jobId: string): ResultRow | undefined;
  shardRow(shard: number): Readonly<MemShard> | undefined;
  dagCount(): number;
  /** For the tests only (EventReadStore in @fenceline/core/testing); no role of the Store lists events. */
  listEvents(query: EventQuery): Promise<EventRow[]>;
}

/**
 * The Store contract in memory, with the SQL store's semantics and refusals: the same
 * conditional updates, the same typed errors, the same orderings (ids ascending, due DAGs
 * by next_run_at then id, expired leases by expiry then id), all time from the store's
 * own clock. Every method runs its whole effect synchronously when it is called, which
 * makes each one atomic, and returns a promise; the simulator puts a link in front of it
 * (world/linked-store.ts) that carries calls and replies through the virtual timer queue,
 * so latency, slow links and cuts sit between a process and the store, not inside it.
 *
 * The work is done by parts over shared tables (memory-tables.ts), and each role of the
 * Store is an object made of their methods (memory-roles.ts); the store is those role
 * objects together. The rules that keep "once" true (memory-rules.ts) can be replaced one
 * at a time by a deliberately broken test store (MemoryStoreOptions.rules).
 */
export function memoryStore(options: MemoryStoreOptions): MemoryStore {
  const standard = standardRules(() => tables);
  const tables = new MemoryTables(options.nowMs, { ...standard, ...options.rules?.(standard) }, options.eventLogLimit ?? Number.POSITIVE_INFINITY);
  tables.observer = options.observer;
  const roles = memoryRoles(tables);
  return {
    ...roles.cluster,
    ...roles.catalogue,
    ...roles.runActions,
    ...roles.runReads,
    ...roles.leader,
    ...roles.workerProtocol,
    ...roles.workerCredentials,
    ...roles.events,
    ...roles.notices,
    ...roles.people,
    ...roles.audit,
    ...roles.resourceLimits,
    ...roles.notifications,
    ...roles.notificationLeader,
    close: async () => {
      tables.listeners.clear();
    },
    // Read access for the simulator's checker and reports (not part of Store).
    observe: (observer) => {
      tables.observer = observer;
    },
    allJobs: () => tables.jobs.values(),
    allRuns: () => tables.runs.values(),
    jobById: (jobId) => tables.jobs.get(jobId),
    resultOf: (jobId) => tables.results.get(jobId),
    shardRow: (shard) => tables.shards.get(shard),
    dagCount: () => tables.dags.size,
    listEvents: async (query) => tables.eventLog.list(query),
  };
}
