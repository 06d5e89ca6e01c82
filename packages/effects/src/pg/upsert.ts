import { report, resolveEffect, type EffectContext } from '../context';
import { EffectInputError } from '../errors';
import { queryOnce, type Database } from './driver';
import { quoteName } from './identifiers';

export interface FencedUpsertInput {
  /** The table the row lives in (plain name, optionally schema-qualified). */
  table: string;
  /** The row's key columns and values: the table's primary key or a unique constraint on exactly these columns. */
  key: Record<string, unknown>;
  /** The other columns to write. */
  values: Record<string, unknown>;
  /** The bigint column that holds the fence the row was written under; default `fence`. */
  fenceColumn?: string;
}

export type UpsertResult = { outcome: 'applied'; fence: number } | { outcome: 'stale'; fence: number };

/**
 * Writes one row under the job's fence: inserted if absent, else replaced only when the
 * stored fence is not higher than this one (`on conflict ... do update ... where stored.fence
 * <= excluded.fence`), in one statement. A lower fence changes nothing and answers `stale`.
 *
 * The row must belong to one task (its key names the effect, for instance the run and the
 * task): fences of different jobs are not comparable. The same attempt may write its row
 * again; a retry or a clear of the task replaces it, and an earlier attempt that wakes late
 * cannot.
 */
export async function fencedUpsert(db: Database, ctx: EffectContext, input: FencedUpsertInput): Promise<UpsertResult> {
  const { fence } = resolveEffect(ctx);
  if (!input || typeof input !== 'object') throw new EffectInputError('input', 'must be { table, key, values }');
  const table = quoteName('table', input.table, { qualified: true });
  const fenceColumn = quoteName('fenceColumn', input.fenceColumn ?? 'fence');
  const keyCols = Object.keys(input.key ?? {});
  const valueCols = Object.keys(input.values ?? {});
  if (keyCols.length === 0) throw new EffectInputError('key', 'must name at least one key column');
  const keyNames = keyCols.map((c) => quoteName(`key.${c}`, c));
  const valueNames = valueCols.map((c) => quoteName(`values.${c}`, c));
  const all = [...keyNames, ...valueNames];
  if (new Set([...all, fenceColumn]).size !== all.length + 1) throw new EffectInputError('values', 'a column is named twice (key, values and the fence column must not overlap)');
  const params = [...keyCols.map((c) => input.key[c]), ...valueCols.map((c) => input.values[c]), fence];
  const placeholders = params.map((_, i) => (i === params.length - 1 ? `$${i + 1}::bigint` : `$${i + 1}`));
  const updates = [...valueNames, fenceColumn].map((c) => `${c} = excluded.${c}`).join(', ');
  const text = `insert into ${table} as stored (${[...all, fenceColumn].join(', ')}) values (${placeholders.join(', ')})
on conflict (${keyNames.join(', ')}) do update set ${updates}
where stored.${fenceColumn} <= excluded.${fenceColumn}
returning 1 as written`;
  const rows = await queryOnce(db, text, params);
  const outcome = rows.length > 0 ? 'applied' : 'stale';
  report(ctx, { key: keyCols.map((c) => `${c}=${String(input.key[c])}`).join(','), sink: 'postgres-upsert', outcome, fence });
  return { outcome, fence };
}
