import type { SQL } from 'drizzle-orm';
import type { DagId, JobId, RunId, WorkerId } from '@fenceline/core';
import { rows, type Executor, type RawRow } from '../store/db';

/**
 * The console reads through the same drizzle handle as the store (SqlStore.db) but never
 * writes: every function in this folder is one read-only statement, so a slow console
 * query can hold no lock a scheduler or worker waits for.
 */
export type ConsoleDb = Executor;

export function query(db: ConsoleDb, statement: SQL): Promise<RawRow[]> {
  return rows(db, statement);
}

export function num(value: unknown): number {
  if (value === null || value === undefined) return 0;
  const n = typeof value === 'number' ? value : Number(value);
  return Number.isFinite(n) ? n : 0;
}

export function numOrNull(value: unknown): number | null {
  return value === null || value === undefined ? null : num(value);
}

export function date(value: unknown): Date {
  return value instanceof Date ? value : new Date(String(value));
}

export function dateOrNull(value: unknown): Date | null {
  return value === null || value === undefined ? null : date(value);
}

export function strOrNull(value: unknown): string | null {
  return value === null || value === undefined ? null : String(value);
}

/**
 * Ids as the store hands them back (postgres.js gives bigints as text). Every id was
 * checked on its way into the store, so decoding one names its type and checks nothing
 * again; the console decodes each id here, once, as it reads the row.
 */
export const jobIdOf = (value: unknown): JobId => String(value) as JobId;
export const runIdOf = (value: unknown): RunId => String(value) as RunId;
export const dagIdOf = (value: unknown): DagId => String(value) as DagId;
export const workerIdOf = (value: unknown): WorkerId => String(value) as WorkerId;

export const jobIdOrNull = (value: unknown): JobId | null => (value === null || value === undefined ? null : jobIdOf(value));
export const runIdOrNull = (value: unknown): RunId | null => (value === null || value === undefined ? null : runIdOf(value));
export const dagIdOrNull = (value: unknown): DagId | null => (value === null || value === undefined ? null : dagIdOf(value));
export const workerIdOrNull = (value: unknown): WorkerId | null => (value === null || value === undefined ? null : workerIdOf(value));
