import { sql } from 'drizzle-orm';
import { DEFAULT_POOL, workerOfferSchema, type WorkerId, type WorkerOffer } from '@fenceline/core';
import { num, query, workerIdOf, type ConsoleDb } from './sql';

/** One live worker's offer: what it said it runs when it registered. */
export interface LiveOffer {
  workerId: WorkerId;
  slots: number;
  offer: WorkerOffer;
  /** False for an older worker that sent no offer: its pool and labels are the defaults, its types what it listed (if anything). */
  reported: boolean;
}

/** Live workers and slots of one pool. */
export interface PoolSummary {
  pool: string;
  liveWorkers: number;
  slots: number;
  /** Every label some live worker of the pool carries, sorted. */
  labels: string[];
  /** Every job type some live worker of the pool runs, sorted. */
  types: string[];
}

export interface LiveOffers {
  offers: LiveOffer[];
  pools: PoolSummary[];
}

/**
 * A worker's offer from its row's meta. A row written before workers sent offers has none:
 * it serves the default pool with no labels and runs the types it listed, if it listed any.
 * An offer that does not parse is read the same way, so one odd row cannot hide a worker.
 */
export function offerOfMeta(meta: unknown): { offer: WorkerOffer; reported: boolean } {
  const m = meta !== null && typeof meta === 'object' ? (meta as Record<string, unknown>) : {};
  const parsed = workerOfferSchema.safeParse(m.offer);
  if (m.offer !== undefined && parsed.success) return { offer: parsed.data, reported: true };
  const listed = Array.isArray(m.jobTypes) ? m.jobTypes.filter((t): t is string => typeof t === 'string') : [];
  return { offer: { pool: DEFAULT_POOL, labels: [], types: listed }, reported: false };
}

/** Summarises offers per pool, default pool first, then by name. */
export function poolsOf(offers: readonly LiveOffer[]): PoolSummary[] {
  const byPool = new Map<string, { liveWorkers: number; slots: number; labels: Set<string>; types: Set<string> }>();
  for (const o of offers) {
    const p = byPool.get(o.offer.pool) ?? { liveWorkers: 0, slots: 0, labels: new Set(), types: new Set() };
    p.liveWorkers += 1;
    p.slots += o.slots;
    for (const l of o.offer.labels) p.labels.add(l);
    for (const t of o.offer.types) p.types.add(t);
    byPool.set(o.offer.pool, p);
  }
  return [...byPool.entries()]
    .map(([pool, p]) => ({ pool, liveWorkers: p.liveWorkers, slots: p.slots, labels: [...p.labels].sort(), types: [...p.types].sort() }))
    .sort((a, b) => (a.pool === DEFAULT_POOL ? -1 : b.pool === DEFAULT_POOL ? 1 : a.pool.localeCompare(b.pool)));
}

/**
 * What live workers offer (pool, labels, job types) and each pool's live workers and slots:
 * the Workers page's pools, the editor's warnings, and why a ready job waits on a run page.
 */
export async function liveOffers(db: ConsoleDb, liveWindowMs: number): Promise<LiveOffers> {
  const result = await query(db, sql`select id, slots, meta from workers where last_seen >= now() - ${liveWindowMs}::float8 * interval '1 millisecond' order by id limit 10000`);
  const offers = result.map((r): LiveOffer => ({ workerId: workerIdOf(r.id), slots: num(r.slots), ...offerOfMeta(r.meta) }));
  return { offers, pools: poolsOf(offers) };
}
