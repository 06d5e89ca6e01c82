import type { RunParams } from '../dag/params';
import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { Timers, Clock } from '../clock';
import { Heap } from '../heap';
import { tieKey, type FreeWorker } from '../fairshare/plan';
import { DEFAULT_OFFER, offerKey, type WorkerOffer } from '../routing/offer';

/** A job handed to a worker, with everything it needs to run and fence its writes. */
/** A worker's long poll: who it is, its slots, how many of them are free, and how long it waits. */
export interface PollRequest {
  workerId: WorkerId;
  slots: number;
  freeSlots: number;
  waitMs: number;
  /** What it can run; a poll without one keeps what the worker offered before (the default offer at first). */
  offer?: WorkerOffer;
}

export interface Assignment {
  jobId: JobId;
  runId: RunId;
  dagId: DagId;
  taskId: string;
  attempt: number;
  fence: number;
  leaseTtlMs: number;
  renewIntervalMs: number;
  task: { type: string; config: Record<string, unknown>; timeoutMs: number; dependsOn: string[] };
  /** The run's resolved parameters, as stored with the run (the leader carries them from the run row). */
  params: RunParams;
  /**
   * The W3C trace context of the job attempt's span, present only when the node traces:
   * the worker's span of the job becomes its child, and HTTP tasks send it on. Optional,
   * so workers and nodes of releases before it understand each other.
   */
  traceparent?: string;
}

/**
 * A lease an operator action revoked, told to its holder on its open poll so that it
 * stops the job at once rather than at its next renewal (which would be refused anyway).
 */
export interface Revocation {
  revoked: true;
  jobId: JobId;
  fence: number;
}

/** What a poll's answer holds: leases granted, and leases revoked. */
export type PollItem = Assignment | Revocation;

export function isRevocation(item: PollItem): item is Revocation {
  return (item as Revocation).revoked === true;
}

interface Waiter {
  free: number;
  resolve: (jobs: PollItem[]) => void;
  cancelTimer: () => void;
}

interface KnownWorker {
  id: WorkerId;
  slots: number;
  offer: WorkerOffer;
  /** offerKey(offer): the file it waits in, and the pool its slots count towards is offer.pool. */
  offerKey: string;
  lastSeenMs: number;
  waiter: Waiter | null;
  /** Free slots promised to dispatch rounds whose grant statement is still out. */
  reserved: number;
  /** Leases granted after the poll they were planned for had been answered, for the next poll. */
  outbox: Assignment[];
  cancelOutboxTimer: (() => void) | null;
  /** Whether its slots are in the pool size (it is live). */
  counted: boolean;
  /** Whether it has an entry in the liveness heap. */
  checked: boolean;
  /** The free slots it is filed under among the waiting workers (0: not filed), and where. */
  filedFree: number;
  filedAt: number;
}

/** A worker to look at again once `seenMs` falls out of the live window. */
interface LivenessCheck {
  worker: KnownWorker;
  seenMs: number;
}

export interface WorkerPoolOptions {
  /** A worker not heard from for this long no longer counts towards the pool. */
  liveWindowMs: number;
  /** How long leases wait in a worker's outbox for its next poll before they are given up. */
  outboxHoldMs: number;
  /** Called with leases a worker did not come back for within outboxHoldMs (to hand them back). */
  onUnclaimed: (workerId: WorkerId, jobs: Assignment[]) => void;
  /** Told of the leases a poll's answer carries to its worker (for their spans). */
  onDelivered?: (workerId: WorkerId, items: PollItem[]) => void;
}

/**
 * The workers waiting on this scheduler node. A worker long-polls with its free slots;
 * the poll is answered the moment a lease is granted to it, or empty when the wait runs
 * out. Waiting costs no store query, which is what keeps ten thousand idle workers cheap.
 *
 * Every worker polls every scheduler node, so each node sees the whole pool: the pool
 * size the fair-share cap needs is local, and any shard leader can hand its work
 * straight to any idle worker.
 */
export class WorkerPool {
  private readonly workers = new Map<string, KnownWorker>();
  /** Workers with an open poll, so a dispatch round does not walk the whole fleet. */
  private readonly waiters = new Set<KnownWorker>();
  /**
   * Waiting workers filed by what they offer and then by their free slots not yet promised
   * to a round, so a round takes the G workers of an offer it can use without looking at
   * the others (see bestWaiting).
   */
  private readonly byOffer = new Map<string, { offer: WorkerOffer; byFree: Map<number, KnownWorker[]> }>();
  /**
   * Slots of live workers, kept up to date as workers are seen and as they fall silent,
   * because every dispatch round reads it: recounting ten thousand workers each time (or
   * each second of a simulated day) would cost more than the round.
   */
  private liveSlots = 0;
  /** The same, per pool: each pool's fair-share cap is a fraction of its own live slots. */
  private readonly liveSlotsByPool = new Map<string, number>();
  /** Each counted worker once, by when it was last seen: the next one that may fall silent on top. */
  private readonly liveness = new Heap<LivenessCheck>((a, b) => a.seenMs < b.seenMs);

  private readonly liveWindowMs: number;

  constructor(
    private readonly clock: Clock,
    private readonly timers: Timers,
    private readonly options: WorkerPoolOptions,
  ) {
    this.liveWindowMs = options.liveWindowMs;
  }

  /**
   * A request from a known worker (a renewal, a result): it is alive even if it has no
   * free slot to poll with, so a fully busy worker keeps counting towards the pool and the
   * fair-share cap does not shrink under a DAG that holds its share.
   */
  seen(workerId: string): void {
    const known = this.workers.get(workerId);
    if (known) this.markSeen(known);
  }

  /** The worker was heard from now: it is live, and is looked at again when that lapses. */
  private markSeen(worker: KnownWorker): void {
    worker.lastSeenMs = this.clock.nowMs();
    if (!worker.counted) {
      worker.counted = true;
      this.countLive(worker.offer.pool, worker.slots);
    }
    if (!worker.checked) {
      worker.checked = true;
      this.liveness.push({ worker, seenMs: worker.lastSeenMs });
    }
  }

  /** Adds `n` (or takes it away, negative) to the live slots of a pool and of the fleet. */
  private countLive(pool: string, n: number): void {
    this.liveSlots += n;
    const left = (this.liveSlotsByPool.get(pool) ?? 0) + n;
    if (left === 0) this.liveSlotsByPool.delete(pool);
    else this.liveSlotsByPool.set(pool, left);
  }

  /**
   * Registers or refreshes a worker without waiting (on register and on every request).
   * An offer, when given, replaces the one it made before; its slots move to the new pool.
   */
  touch(workerId: WorkerId, slots: number, offer?: WorkerOffer): void {
    const known = this.workers.get(workerId);
    if (known) {
      const key = offer ? offerKey(offer) : known.offerKey;
      if (known.counted) {
        this.countLive(known.offer.pool, -known.slots);
        this.countLive(offer?.pool ?? known.offer.pool, slots);
      }
      known.slots = slots;
      if (offer && key !== known.offerKey) {
        // Out of the old offer's file before the key changes, into the new one after.
        const waiter = known.waiter;
        known.waiter = null;
        this.file(known);
        known.offer = offer;
        known.offerKey = key;
        known.waiter = waiter;
        this.file(known);
      }
      this.markSeen(known);
    } else {
      const given = offer ?? DEFAULT_OFFER;
      const worker: KnownWorker = {
        id: workerId,
        slots,
        offer: given,
        offerKey: offerKey(given),
        lastSeenMs: 0,
        waiter: null,
        reserved: 0,
        outbox: [],
        cancelOutboxTimer: null,
        counted: false,
        checked: false,
        filedFree: 0,
        filedAt: 0,
      };
      this.workers.set(workerId, worker);
      this.markSeen(worker);
    }
  }

  /**
   * Waits for work. A second poll from the same worker replaces the first, which is answered
   * empty. `cancelled` ends this wait (and only this one) when its client hangs up; its
   * `onCancel` must run `fn` at once if the client hung up before the wait began (the
   * handler awaits a session check first), or a dead worker stays listed as waiting, its
   * free slots counted by lending rounds, until the wait runs out.
   */
  wait(poll: PollRequest, onWaiting: () => void, cancelled?: { onCancel(fn: () => void): void }): Promise<PollItem[]> {
    const { workerId, slots, freeSlots: free, waitMs } = poll;
    this.touch(workerId, slots, poll.offer);
    const worker = this.workers.get(workerId)!;
    this.answer(worker, []);
    // Leases granted for an earlier poll of this worker go out at once, whatever its free
    // count says now: it hands back what it cannot run.
    if (worker.outbox.length > 0) {
      const jobs = this.takeOutbox(worker);
      this.options.onDelivered?.(workerId, jobs);
      return Promise.resolve(jobs);
    }
    if (free <= 0) return Promise.resolve([]);
    return new Promise<PollItem[]>((resolve) => {
      const mine = (): boolean => worker.waiter?.resolve === resolve;
      const cancelTimer = this.timers.after(waitMs, () => {
        if (mine()) this.answer(worker, []);
      });
      worker.waiter = { free, resolve, cancelTimer };
      this.waiters.add(worker);
      this.file(worker);
      cancelled?.onCancel(() => {
        if (mine()) this.answer(worker, []);
      });
      if (mine()) onWaiting();
    });
  }

  /** Ends a worker's wait (it disconnected or is shutting down). */
  cancel(workerId: string): void {
    const worker = this.workers.get(workerId);
    if (worker) this.answer(worker, []);
  }

  /**
   * Hands back (onUnclaimed) the leases waiting in a worker's outbox, and ends its wait: for
   * a worker registered anew under another session, which cannot write the old one's leases.
   */
  dropOutbox(workerId: WorkerId): void {
    this.cancel(workerId);
    const worker = this.workers.get(workerId);
    if (worker && worker.outbox.length > 0) this.options.onUnclaimed(workerId, this.takeOutbox(worker));
  }

  forget(workerId: WorkerId): void {
    this.cancel(workerId);
    const worker = this.workers.get(workerId);
    if (worker && worker.outbox.length > 0) this.options.onUnclaimed(workerId, this.takeOutbox(worker));
    this.workers.delete(workerId);
  }

  /** Whether any worker has a poll open here (it may still have no slot left to promise). */
  hasWaiters(): boolean {
    return this.waiters.size > 0;
  }

  /** Workers waiting right now with free slots not yet promised to a round. */
  waiting(): FreeWorker<WorkerId>[] {
    const out: FreeWorker<WorkerId>[] = [];
    for (const w of this.waiters) {
      const free = (w.waiter?.free ?? 0) - w.reserved;
      if (free > 0) out.push({ workerId: w.id, free, offer: w.offerKey });
    }
    return out;
  }

  /** The offers of the workers waiting right now, by key, with their pools. */
  waitingOffers(): { key: string; offer: WorkerOffer }[] {
    return [...this.byOffer].map(([key, { offer }]) => ({ key, offer }));
  }

  /** Free slots not yet promised to a round, of every worker of `pool` waiting here. */
  freeIn(pool: string): number {
    let n = 0;
    for (const { offer, byFree } of this.byOffer.values()) {
      if (offer.pool !== pool) continue;
      for (const [free, file] of byFree) n += free * file.length;
    }
    return n;
  }

  /**
   * Every worker of `pool` waiting here with free slots, each with the free slots its poll
   * said less those promised to rounds whose grants are still out: what a lending round's
   * check is counted from. Those promised slots may not have reached the store yet, so the
   * store, counting only the leases on record, would take them for free.
   */
  waitingIn(pool: string): { workerId: WorkerId; free: number }[] {
    const out: { workerId: WorkerId; free: number }[] = [];
    for (const { offer, byFree } of this.byOffer.values()) {
      if (offer.pool !== pool) continue;
      for (const [free, file] of byFree) for (const w of file) out.push({ workerId: w.id, free });
    }
    return out;
  }

  /**
   * The `limit` waiting workers a dispatch round can use, in the planner's order, each with
   * its tie key: most free slots first, and among equally free workers a rotation of their
   * file that starts at a place drawn from `salt` (so nodes, and rounds, start at different
   * workers and rarely fill one another's). The tie key is the worker's place in that
   * rotation, so a round that lists every waiting worker (limit Infinity) gives each the
   * same key. A round that can grant G jobs never gives a slot to a worker outside the
   * first G in this order (at most G - 1 of them have lost a slot when it hands out its
   * last), so the plan is the one the whole list would give, and a round costs O(G) plus
   * the number of distinct free counts, however many workers wait.
   */
  bestWaiting(limit: number, salt: number, offer: string = offerKey(DEFAULT_OFFER)): FreeWorker<WorkerId>[] {
    const out: FreeWorker<WorkerId>[] = [];
    const byFree = this.byOffer.get(offer)?.byFree;
    if (limit <= 0 || !byFree) return out;
    const counts = [...byFree.keys()].sort((a, b) => b - a);
    for (const free of counts) {
      const file = byFree.get(free)!;
      const n = file.length;
      const start = tieKey(free, salt) % n;
      for (let rank = 0; rank < n && out.length < limit; rank++) out.push({ workerId: file[(start + rank) % n]!.id, free, tie: rank, offer });
      if (out.length >= limit) break;
    }
    return out;
  }

  /** Files a worker under its free slots not yet promised (or takes it out when it has none). */
  private file(worker: KnownWorker): void {
    const free = worker.waiter && this.workers.get(worker.id) === worker ? Math.max(0, worker.waiter.free - worker.reserved) : 0;
    if (free === worker.filedFree) return;
    if (worker.filedFree > 0) {
      const files = this.byOffer.get(worker.offerKey)!;
      const file = files.byFree.get(worker.filedFree)!;
      const last = file.pop()!;
      if (last !== worker) {
        file[worker.filedAt] = last;
        last.filedAt = worker.filedAt;
      }
      if (file.length === 0) files.byFree.delete(worker.filedFree);
      if (files.byFree.size === 0) this.byOffer.delete(worker.offerKey);
    }
    worker.filedFree = free;
    if (free > 0) {
      let files = this.byOffer.get(worker.offerKey);
      if (!files) this.byOffer.set(worker.offerKey, (files = { offer: worker.offer, byFree: new Map() }));
      let file = files.byFree.get(free);
      if (!file) files.byFree.set(free, (file = []));
      worker.filedAt = file.length;
      file.push(worker);
    }
  }

  /**
   * Promises `n` of a waiting worker's free slots to a dispatch round, so a round planned
   * while this one's grant statement is out does not plan the same slots again.
   */
  reserve(workerId: string, n: number): void {
    const worker = this.workers.get(workerId);
    if (!worker) return;
    worker.reserved += n;
    this.file(worker);
  }

  /**
   * The end of a round for one worker: its `reserved` slots are released, and the leases
   * the round was granted go to the worker's open poll. If that poll was answered meanwhile
   * (by another round), they wait in the worker's outbox and go with its next poll, which
   * the worker sends at once; if it does not come back within outboxHoldMs they are given
   * to onUnclaimed. False if the worker is unknown (the caller hands the leases back).
   */
  settle(workerId: string, reserved: number, jobs: Assignment[]): boolean {
    const worker = this.workers.get(workerId);
    if (!worker) return false;
    worker.reserved = Math.max(0, worker.reserved - reserved);
    this.file(worker);
    if (jobs.length === 0) return true;
    if (worker.waiter) {
      this.answer(worker, jobs);
      return true;
    }
    worker.outbox.push(...jobs);
    worker.cancelOutboxTimer ??= this.timers.after(this.options.outboxHoldMs, () => {
      worker.cancelOutboxTimer = null;
      const unclaimed = worker.outbox.splice(0);
      if (unclaimed.length > 0) this.options.onUnclaimed(worker.id, unclaimed);
    });
    return true;
  }

  /**
   * Adds `n` free slots to a worker's open poll (never past its slot count), when the
   * node learns of slots it freed (its results); true if the worker was waiting.
   */
  credit(workerId: string, n: number): boolean {
    const waiter = this.workers.get(workerId)?.waiter;
    if (!waiter || n <= 0) return false;
    const worker = this.workers.get(workerId)!;
    waiter.free = Math.min(worker.slots, waiter.free + n);
    this.file(worker);
    return true;
  }

  /**
   * How long this node has not heard from a worker: 0 while it waits in a poll here,
   * Infinity for one this node does not know (never seen, or dropped from the pool).
   */
  silentMs(workerId: string): number {
    const worker = this.workers.get(workerId);
    if (!worker) return Infinity;
    return worker.waiter ? 0 : Math.max(0, this.clock.nowMs() - worker.lastSeenMs);
  }

  /** What a known worker offers now, or undefined for one this node does not know. */
  offerOf(workerId: string): WorkerOffer | undefined {
    return this.workers.get(workerId)?.offer;
  }

  isWaiting(workerId: string): boolean {
    return this.workers.get(workerId)?.waiter != null;
  }

  /**
   * The live workers, each with how long it has been silent here: 0 while its poll is open
   * (a worker blocked in a poll is heard from for as long as it waits, and live even if
   * its poll started long ago), else the time since its last request here.
   */
  live(): { id: WorkerId; slots: number; lastSeenMs: number; silentMs: number; waiting: boolean; offer: WorkerOffer }[] {
    const nowMs = this.clock.nowMs();
    const cutoff = nowMs - this.liveWindowMs;
    const out = [];
    for (const w of this.workers.values()) {
      if (w.waiter || w.lastSeenMs >= cutoff)
        out.push({
          id: w.id,
          slots: w.slots,
          lastSeenMs: w.lastSeenMs,
          silentMs: w.waiter ? 0 : Math.max(0, nowMs - w.lastSeenMs),
          waiting: w.waiter != null,
          offer: w.offer,
        });
    }
    return out;
  }

  /**
   * What a heartbeat writes of the live workers (as live() counts them): each one's id and
   * how long it has been silent here. Built without live()'s other fields, because a node
   * beats for its whole fleet every interval.
   */
  beats(): { workerId: WorkerId; silentMs: number }[] {
    const nowMs = this.clock.nowMs();
    const cutoff = nowMs - this.liveWindowMs;
    const out: { workerId: WorkerId; silentMs: number }[] = [];
    for (const w of this.workers.values()) {
      if (w.waiter) out.push({ workerId: w.id, silentMs: 0 });
      else if (w.lastSeenMs >= cutoff) out.push({ workerId: w.id, silentMs: Math.max(0, nowMs - w.lastSeenMs) });
    }
    return out;
  }

  /**
   * Slots of live workers (of one pool, or of all): what the fair-share cap is a fraction of. Only workers whose
   * last sighting has left the live window are looked at: one seen since goes back on the
   * heap under its new time, one waiting in a poll stays live (answering the poll sees it
   * again), and the rest leave the count.
   */
  poolSlots(pool?: string): number {
    const cutoff = this.clock.nowMs() - this.liveWindowMs;
    for (let top = this.liveness.peek(); top && top.seenMs < cutoff; top = this.liveness.peek()) {
      this.liveness.pop();
      const worker = top.worker;
      worker.checked = false;
      if (this.workers.get(worker.id) !== worker) continue;
      if (worker.lastSeenMs >= cutoff) {
        worker.checked = true;
        this.liveness.push({ worker, seenMs: worker.lastSeenMs });
      } else if (!worker.waiter && worker.counted) {
        worker.counted = false;
        this.countLive(worker.offer.pool, -worker.slots);
      }
    }
    return pool === undefined ? this.liveSlots : (this.liveSlotsByPool.get(pool) ?? 0);
  }

  /** Drops workers silent for longer than the live window; returns their ids. */
  expire(): WorkerId[] {
    const cutoff = this.clock.nowMs() - this.liveWindowMs;
    const gone: WorkerId[] = [];
    for (const w of this.workers.values()) {
      if (!w.waiter && w.lastSeenMs < cutoff && w.outbox.length === 0) {
        this.workers.delete(w.id);
        gone.push(w.id);
        if (w.counted) this.countLive(w.offer.pool, -w.slots);
        w.counted = false;
      }
    }
    return gone;
  }

  /** Every lease still waiting in an outbox, taken out (for a node that stops and hands them back). */
  takeAllOutboxes(): { workerId: WorkerId; jobs: Assignment[] }[] {
    const out: { workerId: WorkerId; jobs: Assignment[] }[] = [];
    for (const worker of this.workers.values()) if (worker.outbox.length > 0) out.push({ workerId: worker.id as WorkerId, jobs: this.takeOutbox(worker) });
    return out;
  }

  private takeOutbox(worker: KnownWorker): Assignment[] {
    worker.cancelOutboxTimer?.();
    worker.cancelOutboxTimer = null;
    return worker.outbox.splice(0);
  }

  /**
   * Tells a worker with an open poll here that its lease was revoked (an operator's cancel
   * or mark), answering the poll with the revocation; it polls again at once. A worker with
   * no open poll (all its slots busy) learns it at its next renewal, which is refused.
   * Returns whether the worker was told.
   */
  revoke(workerId: WorkerId, jobId: JobId, fence: number): boolean {
    const worker = this.workers.get(workerId);
    if (!worker?.waiter) return false;
    this.answer(worker, [{ revoked: true, jobId, fence }]);
    return true;
  }

  private answer(worker: KnownWorker, jobs: PollItem[]): void {
    const waiter = worker.waiter;
    if (!waiter) return;
    worker.waiter = null;
    this.waiters.delete(worker);
    this.file(worker);
    this.markSeen(worker);
    waiter.cancelTimer();
    if (jobs.length > 0) this.options.onDelivered?.(worker.id, jobs);
    waiter.resolve(jobs);
  }
}
