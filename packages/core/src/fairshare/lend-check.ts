import type { WorkerId } from '../ids';

/**
 * What a lending round tells the store about one pool, so that the store, not the node's
 * view of its workers, decides how many slots may be lent. A node's view runs behind the
 * store in two ways: a worker polls with a slot free as soon as its job ends, before the
 * result that ends the lease has landed; and a worker filled by another node keeps its
 * older, freer poll open here until that poll is next answered. Either way the node counts
 * slots the store still records as held, and a lent grant planned from it would take the
 * reserve. The store counts each worker's free slots as the smaller of what its poll here
 * says (only a worker waiting on the node is known to be up) and its slots less the
 * leases the store records for it, and lends only what stays above the reserve.
 *
 * Every grant of a lending node carries its round's check for its pool, lent or not, so the
 * store also counts the batch's other grants against the pool's free slots. A round that
 * lends nothing in a pool gives its grants there a check without workers (listing them
 * costs a walk of the pool's waiting workers, which only a lending round pays).
 */
export interface LendCheck {
  pool: string;
  /** Free slots that must stay free after every lent grant: never lent (the node's count, from its live pool). */
  reserve: number;
  /**
   * The reserve as a share of the pool, and the window in which a worker counts as live: the
   * store counts the reserve again from the workers it has seen within the window or that
   * hold a lease on record, and keeps the larger. A node that has just started has not yet
   * heard from workers whose every slot is busy (they poll no one), so its own pool, and the
   * reserve it counts from it, is too small until they finish a job. A busy worker's
   * last_seen is written by the node it talks to, so while that node is paused or cut off
   * the worker looks silent to the store too; its leases show it is still in the pool.
   * Likewise a worker this check lists as waiting is in the pool whatever its last_seen
   * says: the node heard its poll, but the heartbeat that records it may not have landed
   * yet (a node that has just won its shards back, or whose store calls failed for a
   * while). Its free slots count toward what may be lent, so its slots must count toward
   * the reserve too, or the store lends against a reserve of a smaller pool than the one
   * it counts free slots in.
   */
  fraction: number;
  /** The reserve's floor in slots (see reserveOf), counted with the store's pool as with the node's. */
  minSlots: number;
  liveWindowMs: number;
  /** The pool's workers waiting on the node, each with the free slots its poll said. */
  workers: readonly { workerId: WorkerId; free: number }[];
}

/** A grant as the lending check sees it: its round's check, and whether it lends (takes its DAG above its cap). */
export interface LendCheckedGrant {
  lend?: LendCheck;
  lent?: boolean;
}

/** Whether a batch lends at all: only then does the store take the lending path (a lock and a count). */
export function lendsAny(grants: Iterable<LendCheckedGrant>): boolean {
  for (const g of grants) if (g.lent === true && g.lend !== undefined) return true;
  return false;
}

/** Every worker a batch's lending checks name, once. */
export function lendCheckWorkers(grants: Iterable<LendCheckedGrant>): WorkerId[] {
  const ids = new Set<WorkerId>();
  for (const g of grants) for (const w of g.lend?.workers ?? []) ids.add(w.workerId);
  return [...ids];
}

/**
 * The lent grants of a batch (given in batch order) that the store must refuse, as their
 * indexes. Per pool it takes the check of the batch's latest round that lends there (the
 * freshest view of which workers wait), counts the pool's free slots from it and the store's records
 * (`held`: leases per worker; `slots`: a registered worker's slots, undefined for one the
 * store does not know; `poolSlots`: the slots of the pool's workers the store has seen
 * within the check's live window, that hold a lease, or that the check lists as waiting
 * (see reservePoolWorkers), for the reserve), and takes away every grant of the batch in the pool that does not
 * lend, whether or not it will land (so the answer never depends on the order in which the
 * grants are applied). The lent grants then fit in what is left above the reserve, first
 * come first served; the rest are refused and their jobs stay ready.
 */
export function refusedLends(
  grants: readonly LendCheckedGrant[],
  held: (workerId: WorkerId) => number,
  slots: (workerId: WorkerId) => number | undefined,
  poolSlots: (check: LendCheck) => number,
): Set<number> {
  const checks = new Map<string, LendCheck>();
  const taken = new Map<string, number>();
  for (const g of grants) {
    if (!g.lend) continue;
    if (g.lent) checks.set(g.lend.pool, g.lend);
    else taken.set(g.lend.pool, (taken.get(g.lend.pool) ?? 0) + 1);
  }
  const lendable = new Map<string, number>();
  for (const [pool, check] of checks) {
    let free = 0;
    for (const w of check.workers) free += Math.max(0, Math.min(w.free, (slots(w.workerId) ?? 0) - held(w.workerId)));
    lendable.set(pool, free - (taken.get(pool) ?? 0) - Math.max(check.reserve, reserveOf(check, poolSlots(check))));
  }
  const refused = new Set<number>();
  grants.forEach((g, i) => {
    if (!g.lend || !g.lent) return;
    const left = lendable.get(g.lend.pool)!;
    if (left > 0) lendable.set(g.lend.pool, left - 1);
    else refused.add(i);
  });
  return refused;
}

/**
 * The workers a store counts in a check's pool for the reserve whatever their last_seen:
 * the holders of a lease on record, and the workers the check lists as waiting (see
 * LendCheck.fraction). Both stores take the pool's slots as those of these workers and of
 * the ones seen within the check's live window.
 */
export function reservePoolWorkers(check: LendCheck, holders: Iterable<string>): Set<string> {
  const ids = new Set<string>(holders);
  for (const w of check.workers) ids.add(w.workerId);
  return ids;
}

/** How much of a pool lending keeps free: a share of its live slots, and a floor in slots. */
export interface LendReserve {
  fraction: number;
  minSlots: number;
}

/**
 * The reserve of a pool of `poolSlots` live slots: its share, rounded up, or the floor if
 * that is more. A share alone is a handful of slots in a small pool, too few for the other
 * DAGs' jobs that become ready while a fan-out borrows everything else; the floor holds
 * them. But a floor is a fixed count, and in a pool not much larger than it would leave
 * almost nothing to lend, so it never takes more than an eighth of the pool (a 16-slot pool
 * keeps 2). The leader's planning, both stores' refusal and the simulator's checker all
 * count the reserve here, so they cannot disagree on it.
 */
export function reserveOf(rule: LendReserve, poolSlots: number): number {
  const share = Math.ceil(rule.fraction * poolSlots - 1e-9);
  return Math.max(share, Math.min(rule.minSlots, Math.floor(poolSlots / 8)));
}

/** The lending checks of a batch that lend, one per pool: the pools whose live slots the store must count. */
export function lendingChecks(grants: Iterable<LendCheckedGrant>): LendCheck[] {
  const checks = new Map<string, LendCheck>();
  for (const g of grants) if (g.lent && g.lend) checks.set(g.lend.pool, g.lend);
  return [...checks.values()];
}
