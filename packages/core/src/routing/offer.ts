import { z } from 'zod';

/**
 * Routing: which workers may run which jobs. A worker offers a pool, a set of labels and
 * the job types it can run (shell only where it is allowed); a task needs a pool, some
 * labels and its type. A job is leased only to a worker whose offer covers its need, so a
 * mixed fleet (GPU boxes, workers inside a private network, workers with shell allowed)
 * never hands a job to a worker that would fail it for want of a capability.
 */

/** The pool of every task and worker that names none. */
export const DEFAULT_POOL = 'default';

/** The types every worker runs without being told (shell is not among them: it must be allowed). */
export const ALWAYS_RUN_TYPES = ['noop', 'sleep', 'http'] as const;

/**
 * A pool name: lower-case letters, digits and dashes, starting with a letter or digit, at
 * most 63 characters. This is the one rule for a pool name: the worker's settings, the
 * worker protocol, notification rules and issued worker credentials all check it, so a
 * pool one of them accepts is accepted by all. The store keeps pools as unbounded text.
 */
export const MAX_POOL_NAME_LENGTH = 63;
export const POOL_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const POOL_CHARACTERS = `must be lower-case letters, digits and -, starting with a letter or digit, at most ${MAX_POOL_NAME_LENGTH} characters`;

/** Why text is not a pool name, or null if it is one. */
export function poolProblem(pool: string): string | null {
  return POOL_PATTERN.test(pool) ? null : POOL_CHARACTERS;
}

/**
 * An issued worker credential is `flw.<pool>.<secret>`, the secret 32 random bytes in
 * base64url: the pool is in the clear, so a worker can name itself after its pool without
 * more settings. The scheduler issues and checks tokens; the worker reads its pool.
 */
const WORKER_TOKEN = /^flw\.([^.]+)\.[A-Za-z0-9_-]{43}$/;

/** The pool an issued worker token names, or null when the text is not in the issued form. */
export function workerTokenPool(token: string): string | null {
  const pool = WORKER_TOKEN.exec(token)?.[1];
  return pool !== undefined && poolProblem(pool) === null ? pool : null;
}

/**
 * Whether a credential of `pool` may act as `workerId`: the pool's name itself, or the
 * pool's name, a "-" and anything after it (`gpu-7`, `gpu-host1-3f2a`).
 */
export function poolAllows(pool: string, workerId: string): boolean {
  return workerId === pool || workerId.startsWith(`${pool}-`);
}

/** A label: `name` or `name=value`, each lower-case letters, digits, `_`, `.` and `-`. */
export const LABEL_PATTERN = /^[a-z0-9][a-z0-9_.-]{0,62}(=[a-z0-9][a-z0-9_.-]{0,62})?$/;
export const LABEL_CHARACTERS = 'must be name or name=value, each lower-case letters, digits, _, . and -, starting with a letter or digit';
export const MAX_LABELS = 32;

export const poolNameSchema = z.string().regex(POOL_PATTERN, POOL_CHARACTERS);
export const labelSchema = z.string().regex(LABEL_PATTERN, LABEL_CHARACTERS);
export const labelsSchema = z.array(labelSchema).max(MAX_LABELS, `at most ${MAX_LABELS} labels`);

/** What a worker says it can run, on every poll. */
export const workerOfferSchema = z.object({
  pool: poolNameSchema.default(DEFAULT_POOL),
  labels: labelsSchema.default([]),
  /** Job types it runs; `shell` only if shell is allowed on it. */
  types: z
    .array(z.string().min(1).max(128))
    .max(1_000)
    .default([...ALWAYS_RUN_TYPES]),
});
export type WorkerOffer = z.output<typeof workerOfferSchema>;

/** The offer of a worker that says nothing of itself: the default pool, no labels, the always-run types. */
export const DEFAULT_OFFER: WorkerOffer = Object.freeze({ pool: DEFAULT_POOL, labels: [], types: [...ALWAYS_RUN_TYPES] });

/** What a job needs of the worker it is leased to. */
export interface JobNeed {
  pool: string;
  /** Sorted, without duplicates. */
  labels: readonly string[];
  type: string;
}

/** A task's need, from the fields a spec may set. */
export function needOf(task: { type: string; pool?: string; labels?: readonly string[] }): JobNeed {
  return { pool: task.pool ?? DEFAULT_POOL, labels: [...new Set(task.labels ?? [])].sort(), type: task.type };
}

/** A key two needs share exactly when they are the same need. */
export function needKey(need: JobNeed): string {
  // JSON, so that no character a type or label may hold can make two keys meet.
  return JSON.stringify([need.pool, need.type, need.labels]);
}

/** A key two offers share exactly when they serve the same jobs. */
export function offerKey(offer: WorkerOffer): string {
  return JSON.stringify([offer.pool, [...new Set(offer.types)].sort(), [...new Set(offer.labels)].sort()]);
}

/** Whether a worker making `offer` may be leased a job that needs `need`. */
export function offerFits(offer: WorkerOffer, need: JobNeed): boolean {
  if (offer.pool !== need.pool) return false;
  if (!offer.types.includes(need.type)) return false;
  for (const label of need.labels) if (!offer.labels.includes(label)) return false;
  return true;
}

/**
 * Why no live worker can run a job, in the words the console shows: the first of pool,
 * labels and type that no live offer covers. Null when some live offer fits.
 */
export function unmetNeed(need: JobNeed, offers: readonly WorkerOffer[]): string | null {
  if (offers.some((o) => offerFits(o, need))) return null;
  const inPool = offers.filter((o) => o.pool === need.pool);
  if (inPool.length === 0) return `no live worker in pool \`${need.pool}\``;
  const labelled = inPool.filter((o) => need.labels.every((l) => o.labels.includes(l)));
  if (labelled.length === 0) return `no live worker in pool \`${need.pool}\` has labels ${need.labels.join(', ')}`;
  const what = need.labels.length > 0 ? `in pool \`${need.pool}\` with labels ${need.labels.join(', ')}` : `in pool \`${need.pool}\``;
  return need.type === 'shell' ? `no live worker ${what} allows shell` : `no live worker ${what} runs type \`${need.type}\``;
}

const keyFitCache = new Map<string, boolean>();

/**
 * offerFits over the keys the planner carries (needKey, offerKey), remembered: a dispatch
 * asks it once per distinct need and offer, and a fleet has few of either.
 */
export function keysFit(need: string, offer: string): boolean {
  const both = `${need}\u0001${offer}`;
  let fit = keyFitCache.get(both);
  if (fit === undefined) {
    const [pool, type, labels] = JSON.parse(need) as [string, string, string[]];
    const [offerPool, types, offerLabels] = JSON.parse(offer) as [string, string[], string[]];
    fit = offerFits({ pool: offerPool, types, labels: offerLabels }, { pool, type, labels });
    // Keys are few; the bound only guards a fleet whose offers keep changing.
    if (keyFitCache.size > 10_000) keyFitCache.clear();
    keyFitCache.set(both, fit);
  }
  return fit;
}
