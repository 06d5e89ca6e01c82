import type { Database } from './driver';
import { queryOnce } from './driver';
import { quoteName } from './identifiers';

/** The ledger table the helpers create and use unless told another. */
export const DEFAULT_LEDGER_TABLE = 'fenceline_effects';

/**
 * The ledger: one row per effect key, with the highest fence that took the key's row and
 * the fence its effect was applied under. It lives in the user's database, next to the
 * effects it guards, so an effect and its ledger row commit together.
 */
function createLedger(table: string): string {
  return `create table if not exists ${table} (
  key text primary key,
  fence bigint not null,
  applied_fence bigint,
  applied_at timestamptz,
  updated_at timestamptz not null default now()
)`;
}

const created = new WeakMap<object, Set<string>>();

/** Creates the ledger table once per database handle and name; concurrent creators are harmless. */
export async function ensureLedger(db: Database, table: string): Promise<string> {
  const quoted = quoteName('table', table, { qualified: true });
  const seen = created.get(db) ?? new Set<string>();
  if (seen.has(quoted)) return quoted;
  try {
    await queryOnce(db, createLedger(quoted), []);
  } catch (err) {
    // Two first users racing on `create table if not exists` can collide on the catalog's
    // unique index (23505), find the table's row type made by the other (42710) or see the
    // table appear (42P07): in every case it now exists.
    const code = (err as { code?: string }).code;
    if (code !== '23505' && code !== '42710' && code !== '42P07') throw err;
  }
  seen.add(quoted);
  created.set(db, seen);
  return quoted;
}

/**
 * Takes the key's row and answers what it holds: a new key is inserted under this fence; an
 * existing row is locked by a no-op update, which (unlike a plain read of the statement's
 * snapshot) returns the row as the last transaction that held the lock left it. The lock is
 * held until the transaction ends, so two holders of one key take turns.
 */
export function claimStatement(table: string): string {
  return `insert into ${table} as l (key, fence) values ($1::text, $2::bigint)
on conflict (key) do update set fence = l.fence
returning fence, applied_fence`;
}

/** Records what this fence did: raises the key's fence to it, and marks it applied when it was. */
export function recordStatement(table: string): string {
  return `update ${table} set fence = greatest(fence, $2::bigint),
  applied_fence = case when $3::boolean then $2::bigint else applied_fence end,
  applied_at = case when $3::boolean then now() else applied_at end,
  updated_at = now()
where key = $1::text`;
}
