import postgres, { type Sql } from 'postgres';
import type { ServiceEffect } from './service';

/** What one sink saw of one mode's jobs. */
export interface EffectTally {
  keys: number;
  effects: number;
  /** Effects beyond the first per key. */
  duplicates: number;
  /** Effects applied under a fence lower than one already applied for the key. */
  lowerFence: number;
}

export interface EffectsAudit {
  table: Record<'guarded' | 'naive', EffectTally>;
  service: Record<'guarded' | 'naive', EffectTally>;
}

/** Counts effects per job key in arrival order: duplicates, and lower fences after higher ones. */
function tally(rows: { key: string; fence: number }[]): EffectTally {
  const highest = new Map<string, number>();
  let duplicates = 0;
  let lowerFence = 0;
  for (const r of rows) {
    const seen = highest.get(r.key);
    if (seen !== undefined) {
      duplicates++;
      if (r.fence < seen) lowerFence++;
    }
    highest.set(r.key, Math.max(seen ?? r.fence, r.fence));
  }
  return { keys: highest.size, effects: rows.length, duplicates, lowerFence };
}

/** The user's table (rows in commit order, by their serial id) and the service's record, per mode. */
export async function auditEffects(sql: Sql, service: ServiceEffect[]): Promise<EffectsAudit> {
  const rows = await sql<{ key: string; fence: string; mode: 'guarded' | 'naive' }[]>`select key, fence, mode from effects order by id`;
  const of = (mode: 'guarded' | 'naive') => rows.filter((r) => r.mode === mode).map((r) => ({ key: r.key, fence: Number(r.fence) }));
  return {
    table: { guarded: tally(of('guarded')), naive: tally(of('naive')) },
    service: { guarded: tally(service.filter((e) => e.route === 'guarded')), naive: tally(service.filter((e) => e.route === 'naive')) },
  };
}

/** Opens the user's database and creates the effects table the jobs write to. */
export async function openUserDatabase(url: string): Promise<Sql> {
  const sql = postgres(url, { max: 8, onnotice: () => undefined });
  await sql`create table if not exists effects (id bigserial primary key, key text not null, fence bigint not null, mode text not null, at timestamptz not null default clock_timestamp())`;
  return sql;
}
