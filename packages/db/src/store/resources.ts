import { sql } from 'drizzle-orm';
import { assertResourcesFit, checkLimitInput, isLimitName, type DagSpec, type ResourceLimitRow } from '@fenceline/core';
import { array, firstRow, rows, type Executor } from './db';
import { toDate, toNumber } from './rows';

/** Units held per limit: holds whose job is still leased under the hold's own fence. */
const HELD = sql`select h.name, sum(h.units)::bigint as used from resource_holds h join jobs j on j.id = h.job_id and j.state = 'leased' and j.fence = h.fence group by h.name`;

function limitFromRow(r: Record<string, unknown>): ResourceLimitRow {
  return { name: String(r.name), capacity: toNumber(r.capacity), used: toNumber(r.used ?? 0), waiting: toNumber(r.waiting ?? 0), updatedAt: toDate(r.updated_at) };
}

export async function listResourceLimits(db: Executor): Promise<ResourceLimitRow[]> {
  const result = await rows(
    db,
    sql`with held as (${HELD}),
        waiting as (
          select k.name, count(*) as waiting from jobs j cross join lateral jsonb_object_keys(j.resources) as k(name)
          where j.state = 'ready' and j.resources is not null group by k.name
        )
        select l.name, l.capacity, l.updated_at, coalesce(h.used, 0) as used, coalesce(w.waiting, 0) as waiting
        from resource_limits l left join held h on h.name = l.name left join waiting w on w.name = l.name
        order by l.name`,
  );
  return result.map(limitFromRow);
}

export async function resourceUse(db: Executor): Promise<{ name: string; capacity: number; used: number }[]> {
  const result = await rows(
    db,
    sql`with held as (${HELD}) select l.name, l.capacity, coalesce(h.used, 0) as used from resource_limits l left join held h on h.name = l.name order by l.name`,
  );
  return result.map((r) => ({ name: String(r.name), capacity: toNumber(r.capacity), used: toNumber(r.used) }));
}

export async function setResourceLimit(db: Executor, input: { name: string; capacity: number }): Promise<ResourceLimitRow> {
  const { name, capacity } = checkLimitInput(input);
  await rows(
    db,
    sql`insert into resource_limits (name, capacity, updated_at) values (${name}, ${capacity}, now())
        on conflict (name) do update set capacity = excluded.capacity, updated_at = now()`,
  );
  return (await listResourceLimits(db)).find((l) => l.name === name)!;
}

export async function deleteResourceLimit(db: Executor, name: string): Promise<boolean> {
  if (!isLimitName(name)) return false;
  const row = await firstRow(db, sql`delete from resource_limits where name = ${name} returning name`);
  return row !== undefined;
}

/**
 * Refuses a spec whose tasks consume a limit that does not exist or more units than it has,
 * inside the put's transaction; the rows read are share-locked, so a limit cannot shrink
 * under a put that checked it.
 */
export async function checkSpecResources(tx: Executor, spec: DagSpec): Promise<void> {
  const names = [...new Set(spec.tasks.flatMap((t) => Object.keys(t.resources ?? {})))];
  if (names.length === 0) return;
  const result = await rows(tx, sql`select name, capacity from resource_limits where name = any(${array(names, 'text')}) order by name for share`);
  assertResourcesFit(spec, new Map(result.map((r) => [String(r.name), toNumber(r.capacity)])));
}

/**
 * The start of a transaction that grants limited jobs: every limit row is locked (in name
 * order, so two such grants cannot deadlock), which serialises the limited grants of all
 * nodes; the grant statement that follows takes its snapshot after the lock, so it sees the
 * holds every earlier grant committed. Holds whose lease has ended are deleted here, so the
 * table stays as small as the number of live limited leases.
 */
export async function lockLimits(tx: Executor): Promise<void> {
  await rows(tx, sql`select name from resource_limits order by name for update`);
  await rows(tx, sql`delete from resource_holds h using jobs j where j.id = h.job_id and (j.state <> 'leased' or j.fence <> h.fence)`);
}
