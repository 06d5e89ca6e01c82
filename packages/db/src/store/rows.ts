import { isSequenceId } from '@fenceline/core';
import type { EffectRecord, DagId, DagRow, DagSpec, DagVersionRow, EventRow, JobId, JobRow, ResultRow, RunId, RunRow, ShardLeaseRow, WorkerId, WorkerRow } from '@fenceline/core';
import type { AttemptRow, LogChunkRow } from '@fenceline/core/store';
import type { RawRow } from './db';

/**
 * Raw rows to model rows. The drizzle postgres.js binding hands timestamps back as text
 * and postgres.js hands bigints back as text, so every mapper converts explicitly: ids
 * stay decimal strings, fences and epochs become numbers, times become Dates.
 */

/**
 * Whether text can name a row by a bigint id (the core's one rule for job and run ids);
 * anything else names no row and must not reach a bigint cast. The callers pass typed ids,
 * so this only guards a value that reached the store around its parser.
 */
export const isId = (id: string): boolean => isSequenceId(id);

export function toDate(value: unknown): Date {
  if (value instanceof Date) return value;
  if (typeof value === 'string') {
    const date = new Date(value);
    if (!Number.isNaN(date.getTime())) return date;
  }
  throw new Error(`expected a timestamp from the store, got ${String(value)}`);
}

export function toDateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : toDate(value);
}

export function toId(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  throw new Error(`expected an id from the store, got ${String(value)}`);
}

export function toIdOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : toId(value);
}

// Ids as the store hands them back, in their branded types. Every id was checked on its
// way in (by the parsers in @fenceline/core or the spec's validation), so each row's ids
// are decoded here once and not checked again.
export const toJobId = (value: unknown): JobId => toId(value) as JobId;
export const toRunId = (value: unknown): RunId => toId(value) as RunId;
export const toDagId = (value: unknown): DagId => String(value) as DagId;
export const toWorkerId = (value: unknown): WorkerId => String(value) as WorkerId;
const orNull =
  <T>(decode: (value: unknown) => T) =>
  (value: unknown): T | null =>
    value === null || value === undefined ? null : decode(value);
export const toJobIdOrNull = orNull(toJobId);
export const toRunIdOrNull = orNull(toRunId);
export const toDagIdOrNull = orNull(toDagId);
export const toWorkerIdOrNull = orNull(toWorkerId);

export function toNumber(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(n)) throw new Error(`expected a number from the store, got ${String(value)}`);
  return n;
}

export function toNumberOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : toNumber(value);
}

export function str(value: unknown): string {
  return String(value);
}

export function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/** Expects `spec` beside the dags columns (the current version joined in). */
export function dagFromRow(r: RawRow): DagRow {
  return {
    id: toDagId(r.id),
    shard: toNumber(r.shard),
    version: toNumber(r.current_version),
    spec: r.spec as DagSpec,
    paused: Boolean(r.paused),
    nextRunAt: toDateOrNull(r.next_run_at),
    createdAt: toDate(r.created_at),
    updatedAt: toDate(r.updated_at),
  };
}

export function dagVersionFromRow(r: RawRow): DagVersionRow {
  return { dagId: toDagId(r.dag_id), version: toNumber(r.version), spec: r.spec as DagSpec, createdAt: toDate(r.created_at) };
}

export function runFromRow(r: RawRow): RunRow {
  return {
    id: toRunId(r.id),
    dagId: toDagId(r.dag_id),
    dagVersion: toNumber(r.dag_version),
    shard: toNumber(r.shard),
    scheduledAt: toDate(r.scheduled_at),
    trigger: r.trigger as RunRow['trigger'],
    state: r.state as RunRow['state'],
    createdAt: toDate(r.created_at),
    startedAt: toDateOrNull(r.started_at),
    endedAt: toDateOrNull(r.ended_at),
    params: (r.params as RunRow['params'] | null) ?? {},
  };
}

export function jobFromRow(r: RawRow): JobRow {
  return {
    id: toJobId(r.id),
    runId: toRunId(r.run_id),
    dagId: toDagId(r.dag_id),
    shard: toNumber(r.shard),
    taskId: str(r.task_id),
    state: r.state as JobRow['state'],
    attempt: toNumber(r.attempt),
    maxAttempts: toNumber(r.max_attempts),
    fence: toNumber(r.fence),
    holder: toWorkerIdOrNull(r.holder),
    leaseExpiresAt: toDateOrNull(r.lease_expires_at),
    nextAttemptAt: toDateOrNull(r.next_attempt_at),
    priority: toNumber(r.priority),
    retryBackoffMs: toNumber(r.retry_backoff_ms),
    retryBackoffMaxMs: toNumber(r.retry_backoff_max_ms),
    timeoutMs: toNumber(r.timeout_ms),
    readyAt: toDateOrNull(r.ready_at),
    leasedAt: toDateOrNull(r.leased_at),
    endedAt: toDateOrNull(r.ended_at),
    lastError: strOrNull(r.last_error),
  };
}

/** An attempt's effect reports as stored (checked by effectsProblem before they were written). */
function effectsOrNull(v: unknown): EffectRecord[] | null {
  return Array.isArray(v) && v.length > 0 ? (v as EffectRecord[]) : null;
}

export function resultFromRow(r: RawRow): ResultRow {
  return {
    jobId: toJobId(r.job_id),
    fence: toNumber(r.fence),
    workerId: toWorkerId(r.worker_id),
    outcome: r.outcome as ResultRow['outcome'],
    output: r.output ?? null,
    error: strOrNull(r.error),
    logs: strOrNull(r.logs),
    effects: effectsOrNull(r.effects),
    writtenAt: toDate(r.written_at),
  };
}

export function attemptFromRow(r: RawRow): AttemptRow {
  return {
    jobId: toJobId(r.job_id),
    fence: toNumber(r.fence),
    attempt: toNumber(r.attempt),
    workerId: toWorkerId(r.worker_id),
    outcome: r.outcome as AttemptRow['outcome'],
    output: r.output ?? null,
    error: strOrNull(r.error),
    logs: strOrNull(r.logs),
    effects: effectsOrNull(r.effects),
    startedAt: toDateOrNull(r.started_at),
    endedAt: toDate(r.ended_at),
  };
}

export function logChunkFromRow(r: RawRow): LogChunkRow {
  return { jobId: toJobId(r.job_id), fence: toNumber(r.fence), seq: toNumber(r.seq), text: String(r.text), writtenAt: toDate(r.written_at) };
}

export function shardLeaseFromRow(r: RawRow): ShardLeaseRow {
  return {
    shard: toNumber(r.shard),
    holder: toWorkerIdOrNull(r.holder),
    epoch: toNumber(r.epoch),
    expiresAt: toDateOrNull(r.expires_at),
    acquiredAt: toDateOrNull(r.acquired_at),
  };
}

export function workerFromRow(r: RawRow): WorkerRow {
  return {
    id: toWorkerId(r.id),
    slots: toNumber(r.slots),
    nodeId: strOrNull(r.node_id),
    meta: (r.meta as Record<string, unknown> | null) ?? {},
    startedAt: toDate(r.started_at),
    lastSeen: toDate(r.last_seen),
  };
}

export function eventFromRow(r: RawRow): EventRow {
  return {
    id: toId(r.id),
    at: toDate(r.at),
    type: str(r.type),
    shard: toNumberOrNull(r.shard),
    dagId: toDagIdOrNull(r.dag_id),
    runId: toRunIdOrNull(r.run_id),
    jobId: toJobIdOrNull(r.job_id),
    workerId: toWorkerIdOrNull(r.worker_id),
    nodeId: strOrNull(r.node_id),
    fence: toNumberOrNull(r.fence),
    epoch: toNumberOrNull(r.epoch),
    data: (r.data as Record<string, unknown> | null) ?? {},
  };
}
