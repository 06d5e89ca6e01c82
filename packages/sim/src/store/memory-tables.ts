import {
  checkSameRequest,
  type HeldKey,
  DeposedLeaderError,
  Heap,
  retryBackoffMs,
  type DagSpec,
  type DagVersionRow,
  type JobRow,
  type ResultRow,
  type RunTrigger,
  type RunParams,
} from '@fenceline/core';
import { type LeaderToken, type LeaseRef, type AttemptRow, type LogChunkRow, type StoreNotice } from '@fenceline/core/store';
import { jobRowOf, runIdOf, type MemDag, type MemJob, type MemRun, type MemShard } from './memory-rows';
import { MemoryEventLog } from './memory-event-log';
import { MemoryWorkers } from './memory-workers';
import type { StoreObserver, StoreWrite } from './records';

/** An entry of a time-keyed index: a DAG's next run or a job's lease expiry. */
export interface IndexEntry {
  atMs: number;
  id: string;
  num: number;
}

const byEntry = (a: IndexEntry, b: IndexEntry): boolean => (a.atMs !== b.atMs ? a.atMs < b.atMs : a.num < b.num);

/**
 * The checks that keep "once" true (memory-rules.ts). Every part calls them through the
 * tables, so a test store that breaks one rule breaks it for every part at once.
 */
export interface MemoryRules {
  /** The lead check: the token's node holds the shard under that epoch and the lease is live. */
  leads(token: LeaderToken, nowMs: number): boolean;
  /** The fenced-write check: the fence on record, this holder, a live lease. */
  fenceAccepts(job: MemJob, ref: LeaseRef, nowMs: number): boolean;
  /** The fence a revocation (sweep or hand-back) leaves on the job. */
  revokedFence(fence: number): number;
  /** A job may be leased only when it is ready and its backoff has passed. */
  grantable(job: MemJob, nowMs: number): boolean;
  /** The unique index on (dag_id, scheduled_at). */
  slotTaken(dagId: string, scheduledAtMs: number): boolean;
}

/**
 * The memory store's tables and indexes, shared by its parts (cluster, catalogue, reads,
 * leader, leases, worker writes), with the steps more than one part takes: inserting a
 * run, keeping the indexes, telling the observer of a write and publishing a notice.
 *
 * Indexes: due DAGs per shard and live leases per shard are heaps keyed by time, with
 * stale entries skipped lazily, so a tick over 100,000 DAGs and a sweep over 3,500 leases
 * cost O(due log n), not a scan.
 */
export class MemoryTables {
  shardCount: number | null = null;
  /** When initCluster first ran (cluster_config.created_at): a shard never led has been leaderless since. */
  clusterCreatedAtMs: number | null = null;
  readonly shards = new Map<number, MemShard>();
  /** Scheduler nodes' last presence stamp, store time. */
  readonly nodesSeen = new Map<string, number>();
  readonly dags = new Map<string, MemDag>();
  readonly versions = new Map<string, DagVersionRow[]>();
  readonly dueIndex = new Map<number, Heap<IndexEntry>>();
  readonly runs = new Map<string, MemRun>();
  /** Each DAG's runs in the order they were made (the index on runs.dag_id). */
  readonly runsByDag = new Map<string, MemRun[]>();
  readonly runKeys = new Map<string, string>();
  /** The unique index on (dag_id, request_owner, request_key): a manual trigger's key, to its run id and fingerprint. */
  readonly requestKeys = new Map<string, { runId: string; fingerprint: string }>();
  /** The answers of puts made with a request key, by DAG id, owner and key, with the put's fingerprint. */
  readonly dagRequestKeys = new Map<string, { version: number; created: boolean; fingerprint: string }>();
  /** resource_limits: capacity and last change per limit name. */
  readonly resourceLimits = new Map<string, { capacity: number; updatedAtMs: number }>();
  /** resource_holds: per job, the units of each limit its lease under `fence` holds. */
  readonly resourceHolds = new Map<string, { fence: number; units: Record<string, number> }>();
  readonly activeRunsByShard = new Map<number, Set<string>>();
  readonly jobs = new Map<string, MemJob>();
  readonly leaseIndex = new Map<number, Heap<IndexEntry>>();
  readonly leased = new Set<string>();
  readonly results = new Map<string, ResultRow>();
  /** Every attempt's result per job, lowest fence first (what job_attempts holds in SQL). */
  readonly attempts = new Map<string, AttemptRow[]>();
  /** Streamed log lines per attempt, keyed `${jobId}:${fence}` (what job_log_chunks holds in SQL). */
  readonly logChunks = new Map<string, LogChunkRow[]>();
  readonly workerTable = new MemoryWorkers();
  readonly eventLog: MemoryEventLog;
  readonly listeners = new Set<(notice: StoreNotice) => void>();
  nextRunNum = 1;
  nextJobNum = 1;
  /** Told of every write that lands (the invariant checker); the store attaches it. */
  observer: StoreObserver | undefined;

  constructor(
    /** The store's own clock in epoch milliseconds. */
    readonly nowMs: () => number,
    readonly rules: MemoryRules,
    eventLogLimit: number,
  ) {
    this.eventLog = new MemoryEventLog(eventLogLimit);
  }

  emit(write: StoreWrite): void {
    this.observer?.(write);
  }

  /**
   * Notices go out after the statement that sent them, as pg_notify delivers on commit;
   * a microtask keeps a listener from running inside the write that published it.
   */
  publish(notice: StoreNotice): void {
    for (const listener of [...this.listeners]) queueMicrotask(() => listener(notice));
  }

  deposed(token: LeaderToken, operation: string): DeposedLeaderError {
    return new DeposedLeaderError(`${operation} refused: node ${token.nodeId} no longer leads shard ${token.shard} under epoch ${token.epoch}`, {
      shard: token.shard,
      nodeId: token.nodeId,
      epoch: token.epoch,
      operation,
    });
  }

  insertRun(dag: MemDag, scheduledAtMs: number, trigger: RunTrigger, token: LeaderToken | null, backfillId: string | null = null, params: RunParams = {}): MemRun {
    const now = this.nowMs();
    const num = this.nextRunNum++;
    const run: MemRun = {
      num,
      id: runIdOf(num),
      dagId: dag.id,
      dagVersion: dag.version,
      shard: dag.shard,
      scheduledAtMs,
      trigger,
      state: 'queued',
      backfillId,
      createdAtMs: now,
      startedAtMs: null,
      endedAtMs: null,
      params: { ...params },
      jobIds: [],
    };
    this.runs.set(run.id, run);
    const ofDag = this.runsByDag.get(dag.id);
    if (ofDag) ofDag.push(run);
    else this.runsByDag.set(dag.id, [run]);
    this.runKeys.set(`${dag.id}\u0000${scheduledAtMs}`, run.id);
    let active = this.activeRunsByShard.get(dag.shard);
    if (!active) this.activeRunsByShard.set(dag.shard, (active = new Set()));
    active.add(run.id);
    this.emit({ op: 'run:created', atMs: now, runId: run.id, dagId: dag.id, scheduledAtMs, trigger, token });
    return run;
  }

  indexDue(dag: MemDag): void {
    if (dag.nextRunAtMs === null || dag.paused) return;
    let heap = this.dueIndex.get(dag.shard);
    if (!heap) this.dueIndex.set(dag.shard, (heap = new Heap(byEntry)));
    heap.push({ atMs: dag.nextRunAtMs, id: dag.id, num: 0 });
  }

  /** Drops index entries at the top that no longer describe their DAG. */
  pruneDue(heap: Heap<IndexEntry>): void {
    for (let top = heap.peek(); top; top = heap.peek()) {
      const dag = this.dags.get(top.id);
      if (dag && !dag.paused && dag.nextRunAtMs === top.atMs) return;
      heap.pop();
    }
  }

  indexLease(job: MemJob): void {
    this.leased.add(job.id);
    let heap = this.leaseIndex.get(job.shard);
    if (!heap) this.leaseIndex.set(job.shard, (heap = new Heap(byEntry)));
    heap.push({ atMs: job.leaseExpiresAtMs!, id: job.id, num: job.num });
  }

  pruneLeases(heap: Heap<IndexEntry>): void {
    for (let top = heap.peek(); top; top = heap.peek()) {
      const job = this.jobs.get(top.id);
      if (job && job.state === 'leased' && job.leaseExpiresAtMs === top.atMs) return;
      heap.pop();
    }
  }

  jobRow(j: MemJob): JobRow {
    return jobRowOf(j);
  }

  specOf(dag: MemDag): DagSpec {
    const versions = this.versions.get(dag.id)!;
    return versions[versions.length - 1]!.spec;
  }

  /** min(base * 2^(attempt - 1), max) for the attempt that just ended, as the SQL store computes it. */
  backoffMs(job: MemJob): number {
    return retryBackoffMs(Math.max(job.attempt, 1), job.retryBackoffMs, job.retryBackoffMaxMs);
  }
}

/** Where a memory store files a held key: what it is scoped to (a DAG, a run), its owner and the key, as the SQL store's unique indexes do. */
export function heldKeySlot(scope: string, held: HeldKey): string {
  return `${scope}\u0000${held.owner}\u0000${held.key}`;
}

/** Refuses a held key filed with another request's fingerprint; the memory store keeps the fingerprint's text itself. */
export function checkFiledRequest(held: HeldKey, filed: string): void {
  checkSameRequest(held, filed, (a, b) => a === b);
}
