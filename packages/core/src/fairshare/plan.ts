/**
 * Fair share: which ready jobs get the free worker slots on this dispatch.
 *
 * The cap (docs/architecture.md, rule 8) bounds how much of the pool one DAG may hold at once, and
 * round-robin across DAGs decides the order within one dispatch, so a DAG that fans out
 * to 10,000 ready jobs takes its share without delaying any other DAG's first job. The
 * cap adds no capacity; it decides which DAG waits, and the one that waits is the one
 * that asked for the whole pool.
 */

import { bestK } from './best-k';
import { Heap } from '../heap';

/**
 * The planner is generic in its job and worker ids (`J`, `W`): a scheduler node plans with
 * the branded ids of its leaders and its pool, and gets them back on its grants unchanged.
 */
export interface ReadyJob<J extends string = string> {
  jobId: J;
  /** Higher runs first within one DAG. */
  priority: number;
  /** When the job became ready (store time); older first among equal priorities. */
  readyAtMs: number;
  /** What it needs of a worker (routing/offer.ts needKey); any worker of the pool when absent. */
  need?: string;
  /** Units of resource limits it holds once granted; none when absent. */
  resources?: Record<string, number>;
}

export interface DispatchDag<J extends string = string> {
  dagId: string;
  /** Leases the DAG holds right now, across all its runs. */
  held: number;
  /** The DAG's own cap (fraction of the pool), overriding the cluster's. */
  capFraction?: number;
  /** Higher is served first when several DAGs wait for the same slots (0 when absent). */
  priority?: number;
  ready: ReadyJob<J>[];
}

export interface FreeWorker<W extends string = string> {
  workerId: W;
  /** Slots the worker has free right now. */
  free: number;
  /**
   * Its tie-break key for this round, if the caller computed it (tieKey of its workerTag
   * and the round's salt); otherwise the planner derives the same key from `tieSalt`.
   */
  tie?: number;
  /** The jobs it may run (routing/offer.ts offerKey); any job of the pool when absent. */
  offer?: string;
}

export interface DispatchGrant<J extends string = string, W extends string = string> {
  jobId: J;
  workerId: W;
  dagId: string;
  /** Granted beyond the DAG's cap, from idle capacity the pool lends. */
  lent?: boolean;
}

export interface CappedDag {
  dagId: string;
  /** Leases the DAG holds once this plan's grants are made. */
  held: number;
  cap: number;
  /** Ready jobs left without a grant. */
  waiting: number;
}

export interface DispatchPlan<J extends string = string, W extends string = string> {
  grants: DispatchGrant<J, W>[];
  /** DAGs that still have ready jobs but reached their cap (none while the pool is empty). */
  capped: CappedDag[];
}

export interface DispatchInput<J extends string = string, W extends string = string> {
  dags: DispatchDag<J>[];
  /** Slots of all live workers, busy or not: the pool the cap is a fraction of. */
  poolSlots: number;
  workers: FreeWorker<W>[];
  /** The cluster's cap, used for DAGs that set none (DEFAULTS.capFraction by default in config). */
  capFraction: number;
  /** Which DAG goes first this time; pass a counter that grows by one per call. */
  rotation?: number;
  /**
   * Breaks ties between equally free workers. Without it ties go by worker id, so every
   * node of a cluster prefers the same idle workers and fills a worker another node has
   * just filled (each such job is handed back). Pass a number that differs between nodes
   * and between rounds.
   */
  tieSalt?: number;
  /** Whether a worker offering `offer` may run a job needing `need` (every worker fits every job when absent). */
  fits?: (need: string, offer: string) => boolean;
  /**
   * Lending: a DAG at its cap may be granted more while the pool keeps more than this many
   * free slots (the reserve, never lent, so another DAG's newly ready job starts at once).
   * No lending when absent.
   */
  lendReserve?: number;
  /** Free slots of the whole pool as this node sees it (the `workers` listed may be fewer); the sum of `workers` when absent. */
  poolFree?: number;
  /**
   * Units free per resource limit, taken from as jobs are granted (the caller may share one
   * map between the plans of several pools). A job whose units do not fit is left ready,
   * and so is one naming a limit missing here. No job consumes anything when absent.
   */
  limitsFree?: Map<string, number>;
}

/** Whether a job's units fit in what is free (always, for a job that consumes none). */
function unitsFit(job: ReadyJob, free: Map<string, number> | undefined): boolean {
  if (!job.resources) return true;
  if (!free) return false;
  for (const [name, units] of Object.entries(job.resources)) if ((free.get(name) ?? 0) < units) return false;
  return true;
}

/**
 * The most leases one DAG may hold in a pool of `poolSlots`: floor(capFraction * pool),
 * but at least one so a small pool still serves every DAG, and zero for an empty pool.
 * The tiny epsilon keeps binary rounding from costing a slot (0.29 * 100 is
 * 28.999999999999996 in floating point, and the cap meant is 29).
 */
export function capFor(poolSlots: number, capFraction: number): number {
  if (!(poolSlots > 0)) return 0;
  return Math.max(1, Math.floor(capFraction * poolSlots + 1e-9));
}

/** Priority desc, then readyAtMs asc, then jobId: the order jobs of one DAG are granted in. */
export function compareReady(a: ReadyJob, b: ReadyJob): number {
  if (a.priority !== b.priority) return b.priority - a.priority;
  if (a.readyAtMs !== b.readyAtMs) return a.readyAtMs - b.readyAtMs;
  return a.jobId < b.jobId ? -1 : a.jobId > b.jobId ? 1 : 0;
}

/**
 * The first `k` jobs of `jobs` in compareReady order, sorted. When k is small next to the
 * number of jobs (a cap of 30 over 10,000 ready jobs) it keeps a bounded heap of the best
 * k seen so far (bestK), O(n log k), instead of sorting everything on every dispatch.
 */
export function topReady<J extends string>(jobs: readonly ReadyJob<J>[], k: number): ReadyJob<J>[] {
  if (k <= 0) return [];
  if (k * 4 >= jobs.length) return [...jobs].sort(compareReady).slice(0, k);
  return bestK(jobs, k, (a, b) => compareReady(a, b) < 0).sort(compareReady);
}

/** MurmurHash3's 32-bit finaliser: every input bit moves about half the output bits. */
function mix32(x: number): number {
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * A 32-bit hash of `text` under `salt` (FNV-1a over the text, started from the mixed salt
 * and mixed again at the end), so that nearby salts order the same ids unrelatedly.
 */
export function saltedHash(text: string, salt: number): number {
  let h = (0x811c9dc5 ^ mix32(salt)) >>> 0;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return mix32(h);
}

/** A worker's fixed tag, computed once per worker, from which each round's tie key is made. */
export function workerTag(workerId: string): number {
  return saltedHash(workerId, 0);
}

/** A worker's tie key in a round salted `salt`: a few integer operations, no string work. */
export function tieKey(tag: number, salt: number): number {
  return mix32((tag ^ mix32(salt)) >>> 0);
}

/**
 * The order the planner hands out slots in: most free first, then the lower tie key,
 * then the lower id. Exported so a caller that pre-selects workers uses the same order.
 */
export function workerBefore(a: { workerId: string; free: number; tie: number }, b: { workerId: string; free: number; tie: number }): boolean {
  if (a.free !== b.free) return a.free > b.free;
  if (a.tie !== b.tie) return a.tie < b.tie;
  return a.workerId < b.workerId;
}

interface HeapWorker<W extends string> {
  workerId: W;
  free: number;
  tie: number;
}

/**
 * Free slots as a heap in (free desc, tie asc, workerId asc) order: each grant goes to the
 * worker with the most free slots left, so load spreads instead of filling one worker;
 * `tie` (given by the pool, else a salted hash of the id, or 0) decides between equally
 * free workers.
 */
class WorkerHeap<W extends string> {
  private readonly heap: Heap<HeapWorker<W>>;

  constructor(items: HeapWorker<W>[]) {
    this.heap = new Heap(workerBefore, items);
  }

  get size(): number {
    return this.heap.size;
  }

  peek(): HeapWorker<W> | undefined {
    return this.heap.peek();
  }

  /** Takes one slot from the worker with the most free slots. */
  take(): W | undefined {
    const top = this.heap.peek();
    if (top === undefined) return undefined;
    top.free--;
    if (top.free === 0) this.heap.pop();
    else this.heap.topChanged();
    return top.workerId;
  }
}

/**
 * The free slots of one dispatch, filed by what the workers offer: one heap per offer, so
 * a job is given the most free worker among those that may run it. A fleet that offers
 * one thing (most of them) is one heap, as before routing existed.
 */
class OfferHeaps<W extends string> {
  private readonly heaps = new Map<string, WorkerHeap<W>>();
  /** Per need, the heaps whose offer fits it (computed once per need and dispatch). */
  private readonly fitting = new Map<string, WorkerHeap<W>[]>();

  constructor(
    workers: readonly FreeWorker<W>[],
    tieSalt: number | undefined,
    private readonly fits: ((need: string, offer: string) => boolean) | undefined,
  ) {
    const byOffer = new Map<string, HeapWorker<W>[]>();
    for (const w of workers) {
      if (!(w.free >= 1)) continue;
      const key = w.offer ?? '';
      let list = byOffer.get(key);
      if (!list) byOffer.set(key, (list = []));
      list.push({ workerId: w.workerId, free: Math.floor(w.free), tie: w.tie ?? (tieSalt === undefined ? 0 : tieKey(workerTag(w.workerId), tieSalt)) });
    }
    for (const [key, items] of byOffer) this.heaps.set(key, new WorkerHeap(items));
  }

  private heapsFor(need: string | undefined): WorkerHeap<W>[] {
    const key = need ?? '';
    let list = this.fitting.get(key);
    if (!list) {
      const fits = this.fits;
      list = need === undefined || !fits ? [...this.heaps.values()] : [...this.heaps].filter(([offer]) => fits(need, offer)).map(([, heap]) => heap);
      this.fitting.set(key, list);
    }
    return list;
  }

  /** Whether some worker with a free slot may run a job of this need. */
  canPlace(need: string | undefined): boolean {
    return this.heapsFor(need).some((h) => h.size > 0);
  }

  /** One slot of the most free worker that may run a job of this need, or undefined if none is left. */
  take(need: string | undefined): W | undefined {
    let best: WorkerHeap<W> | undefined;
    for (const heap of this.heapsFor(need)) {
      const top = heap.peek();
      if (top === undefined) continue;
      const bestTop = best?.peek();
      if (bestTop === undefined || workerBefore(top, bestTop)) best = heap;
    }
    return best?.take();
  }
}

/**
 * The DAGs in tiers of equal priority, highest first, each tier in the rotation's order:
 * a tier is served round-robin, and a lower tier only gets what the higher ones leave.
 */
function priorityTiers(dags: readonly DispatchDag[], start: number): number[][] {
  const n = dags.length;
  const tiers = new Map<number, number[]>();
  for (let k = 0; k < n; k++) {
    const i = (start + k) % n;
    const p = dags[i]!.priority ?? 0;
    let tier = tiers.get(p);
    if (!tier) tiers.set(p, (tier = []));
    tier.push(i);
  }
  return [...tiers].sort((a, b) => b[0] - a[0]).map(([, tier]) => tier);
}

/**
 * Plans one dispatch: round-robin over the DAGs, one job per DAG per round, starting at
 * `rotation % dags.length`, until free slots or grantable jobs run out; DAGs of a higher
 * priority are served before any of a lower one. A DAG gets at most cap - held grants;
 * with `lendReserve` set, DAGs at their cap then borrow further slots, in the same order,
 * while the pool keeps more than the reserve free. A job goes only to a worker whose offer fits
 * its need. Pure and O(total ready jobs + grants * (log(workers) + offers)).
 */
export function planDispatch<J extends string = string, W extends string = string>(input: DispatchInput<J, W>): DispatchPlan<J, W> {
  const { dags, poolSlots, workers, capFraction } = input;
  const pool = new OfferHeaps(workers, input.tieSalt === undefined ? undefined : Math.floor(input.tieSalt) | 0, input.fits);
  let freeSlots = 0;
  for (const w of workers) if (w.free >= 1) freeSlots += Math.floor(w.free);
  const lending = input.lendReserve !== undefined;
  // Slots that may be lent: the pool's free slots above its reserve (none without lending).
  let lendable = lending ? Math.max(0, Math.floor(input.poolFree ?? freeSlots) - Math.max(0, Math.floor(input.lendReserve!))) : 0;

  // Per DAG, the jobs it may be granted this time, best first, among those some free worker can run.
  const caps = dags.map((dag) => capFor(poolSlots, dag.capFraction ?? capFraction));
  const queues = dags.map((dag, i) => {
    // Jobs no free worker may run, or whose units are not free, would only take a place in the queue.
    const placeable = input.fits || input.limitsFree ? dag.ready.filter((j) => pool.canPlace(j.need) && unitsFit(j, input.limitsFree)) : dag.ready;
    const room = Math.max(0, caps[i]! - dag.held) + (lending ? lendable : 0);
    return topReady(placeable, Math.min(room, freeSlots));
  });
  const granted = new Array<number>(dags.length).fill(0);
  const next = new Array<number>(dags.length).fill(0);

  const grants: DispatchGrant<J, W>[] = [];
  const n = dags.length;
  if (n > 0 && freeSlots > 0) {
    const tiers = priorityTiers(dags, ((Math.floor(input.rotation ?? 0) % n) + n) % n);
    // Round-robin per tier and phase: first within the caps, then (when lending) beyond them.
    for (const [lend, tier] of (lending ? [false, true] : [false]).flatMap((l) => tiers.map((t) => [l, t] as const))) {
      let active = tier.filter((i) => next[i]! < queues[i]!.length);
      while (active.length > 0 && freeSlots > 0) {
        const still: number[] = [];
        for (const i of active) {
          if (freeSlots === 0 || (lend && lendable === 0)) break;
          const dag = dags[i]!;
          const underCap = dag.held + granted[i]! < caps[i]!;
          if (lend ? underCap : !underCap) continue;
          const job = queues[i]![next[i]!++]!;
          const workerId = unitsFit(job, input.limitsFree) ? pool.take(job.need) : undefined;
          if (workerId !== undefined) {
            if (job.resources) for (const [name, units] of Object.entries(job.resources)) input.limitsFree!.set(name, input.limitsFree!.get(name)! - units);
            granted[i]!++;
            freeSlots--;
            // Every grant uses a free slot of the pool, so it leaves one fewer to lend.
            lendable = Math.max(0, lendable - 1);
            grants.push(lend ? { jobId: job.jobId, workerId, dagId: dag.dagId, lent: true } : { jobId: job.jobId, workerId, dagId: dag.dagId });
          }
          if (next[i]! < queues[i]!.length) still.push(i);
        }
        if (lend && lendable === 0) break;
        active = still;
      }
    }
  }

  const capped: CappedDag[] = [];
  dags.forEach((dag, i) => {
    const held = dag.held + granted[i]!;
    const waiting = dag.ready.length - granted[i]!;
    // With no pool at all nothing is held back by fair share; the DAGs wait for workers.
    if (waiting > 0 && caps[i]! > 0 && held >= caps[i]!) capped.push({ dagId: dag.dagId, held, cap: caps[i]!, waiting });
  });
  return { grants, capped };
}
