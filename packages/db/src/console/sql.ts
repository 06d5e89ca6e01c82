import type { SQL } from 'drizzle-orm';
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

/** Ids are decimal strings; anything else cannot name a row and must not reach a bigint cast. */
export function isId(id: string): boolean {
  return /^[0-9]{1,18}$/.test(id);
}
