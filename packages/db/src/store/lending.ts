import { sql } from 'drizzle-orm';
import { DEFAULT_POOL, lendCheckWorkers, lendingChecks, refusedLends } from '@fenceline/core';
import { type Grant, type LeaderToken } from '@fenceline/core/store';
import { array, msInterval, rows, type Executor } from './db';
import { toNumber } from './rows';

/**
 * The start of a transaction that grants lent leases: each pool the batch lends in is
 * locked (an advisory lock per pool, in name order, so two lending batches cannot
 * deadlock), which serialises the lending of all nodes in the pool; then the leases on
 * record for the workers the checks name, and the live slots of each pool (for the
 * reserve), are counted after the lock, and the lent grants
 * that would leave the pool fewer free slots than its reserve are dropped from the batch
 * (fairshare/lend-check.ts decides which). Dropped jobs stay ready, as for any grant the
 * store refuses.
 */
export async function withoutRefusedLends(tx: Executor, items: { token: LeaderToken; grants: Grant[] }[]): Promise<{ token: LeaderToken; grants: Grant[] }[]> {
  const flat = items.flatMap((i) => i.grants);
  const pools = [...new Set(flat.filter((g) => g.lent && g.lend).map((g) => g.lend!.pool))].sort();
  if (pools.length === 0) return items;
  for (const pool of pools) await rows(tx, sql`select pg_advisory_xact_lock(hashtextextended(${`fenceline.lend:${pool}`}, 0))`);
  const ids = lendCheckWorkers(flat);
  // One probe of the leased-holder index per worker, and only for workers a check names.
  const counted = await rows(
    tx,
    sql`select w.id, w.slots, (select count(*) from jobs j where j.holder = w.id and j.state = 'leased') as held
        from workers w where w.id = any(${array(ids, 'text')})`,
  );
  const slots = new Map<string, number>();
  const held = new Map<string, number>();
  for (const r of counted) {
    slots.set(String(r.id), toNumber(r.slots));
    held.set(String(r.id), toNumber(r.held));
  }
  // The slots of each pool that lends, for the reserve: its workers seen within the live
  // window (a range scan), those holding a lease (a scan of the leased-holder index) and
  // those the check lists as waiting (see reservePoolWorkers in fairshare/lend-check.ts).
  const live = new Map<string, number>();
  for (const check of lendingChecks(flat)) {
    const [row] = await rows(
      tx,
      sql`select coalesce(sum(w.slots), 0) as slots from workers w
          where coalesce(w.meta->'offer'->>'pool', ${DEFAULT_POOL}) = ${check.pool}
            and w.id in (select id from workers where last_seen >= now() - ${msInterval(check.liveWindowMs)}
                         union select holder from jobs where state = 'leased' and holder is not null
                         union select unnest(${array(
                           check.workers.map((w) => w.workerId),
                           'text',
                         )}))`,
    );
    live.set(check.pool, toNumber(row?.slots ?? 0));
  }
  const refused = refusedLends(
    flat,
    (w) => held.get(w) ?? 0,
    (w) => slots.get(w),
    (check) => live.get(check.pool) ?? 0,
  );
  if (refused.size === 0) return items;
  const drop = new Set([...refused].map((i) => flat[i]!));
  return items.map((i) => ({ token: i.token, grants: i.grants.filter((g) => !drop.has(g)) }));
}
