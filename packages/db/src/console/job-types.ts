import { sql } from 'drizzle-orm';
import { num, query, type ConsoleDb } from './sql';

export interface LiveJobTypes {
  /** Workers seen within the live window. */
  liveWorkers: number;
  /** Of those, the ones that said at registration which job types they run. */
  reporting: number;
  /** Every job type some live worker runs, sorted. */
  types: string[];
}

/**
 * The job types live workers run, from what each sent when it registered (workers.meta's
 * jobTypes), so the editor can say when a task would wait for a worker that never comes.
 * A live worker that sent no list (an older worker) is counted apart: its types are unknown.
 */
export async function liveJobTypes(db: ConsoleDb, liveWindowMs: number): Promise<LiveJobTypes> {
  const [row] = await query(
    db,
    sql`with live as (
          select meta from workers where last_seen >= now() - ${liveWindowMs}::float8 * interval '1 millisecond'
        )
        select (select count(*) from live) as live_workers,
          (select count(*) from live where jsonb_typeof(meta->'jobTypes') = 'array') as reporting,
          coalesce((select array_agg(distinct t order by t) from live, jsonb_array_elements_text(
            case when jsonb_typeof(meta->'jobTypes') = 'array' then meta->'jobTypes' else '[]'::jsonb end) as t), '{}') as types`,
  );
  const types = Array.isArray(row?.types) ? row.types.map(String) : [];
  return { liveWorkers: num(row?.live_workers), reporting: num(row?.reporting), types };
}
