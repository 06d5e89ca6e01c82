import type { Timers, Clock } from '../clock';
import type { FreeWorker } from '../fairshare/plan';

/** A job handed to a worker, with everything it needs to run and fence its writes. */
export interface Assignment {
  jobId: string;
  runId: string;
  dagId: string;
  taskId: string;
  attempt: number;
  fence: number;
  leaseTtlMs: number;
  renewIntervalMs: number;
  task: { type: string; config: Record<string, unknown>; timeoutMs: number };
}

interface Waiter {
  free: number;
  resolve: (jobs: Assignment[]) => void;
  cancelTimer: () => void;
}

interface KnownWorker {
  id: string;
  slots: number;
  lastSeenMs: number;
  waiter: Waiter | null;
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
  /** The pool size is read on every dispatch round; it is recounted at most this often. */
  private slotsCache: { atMs: number; slots: number } | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly timers: Timers,
    /** A worker not heard from for this long no longer counts towards the pool. */
    private readonly liveWindowMs: number,
  ) {}

  /**
   * A request from a known worker (a renewal, a result): it is alive even if it has no
   * free slot to poll with, so a fully busy worker keeps counting towards the pool and the
   * fair-share cap does not shrink under a DAG that holds its share.
   */
  seen(workerId: string): void {
    const known = this.workers.get(workerId);
    if (known) known.lastSeenMs = this.clock.nowMs();
  }

  /** Registers or refreshes a worker without waiting (on register and on every request). */
  touch(workerId: string, slots: number): void {
    const known = this.workers.get(workerId);
    if (known) {
      known.slots = slots;
      known.lastSeenMs = this.clock.nowMs();
    } else {
      this.workers.set(workerId, { id: workerId, slots, lastSeenMs: this.clock.nowMs(), waiter: null });
      this.slotsCache = null;
    }
  }

  /**
   * Waits for work. A second poll from the same worker replaces the first, which is answered
   * empty. `cancelled` ends this wait (and only this one) when its client hangs up.
   */
  wait(workerId: string, slots: number, free: number, waitMs: number, onWaiting: () => void, cancelled?: { onCancel(fn: () => void): void }): Promise<Assignment[]> {
    this.touch(workerId, slots);
    const worker = this.workers.get(workerId)!;
    this.answer(worker, []);
    if (free <= 0) return Promise.resolve([]);
    return new Promise<Assignment[]>((resolve) => {
      const mine = (): boolean => worker.waiter?.resolve === resolve;
      const cancelTimer = this.timers.after(waitMs, () => {
        if (mine()) this.answer(worker, []);
      });
      worker.waiter = { free, resolve, cancelTimer };
      this.waiters.add(worker);
      cancelled?.onCancel(() => {
        if (mine()) this.answer(worker, []);
      });
      onWaiting();
    });
  }

  /** Ends a worker's wait (it disconnected or is shutting down). */
  cancel(workerId: string): void {
    const worker = this.workers.get(workerId);
    if (worker) this.answer(worker, []);
  }

  forget(workerId: string): void {
    this.cancel(workerId);
    this.workers.delete(workerId);
  }

  /** Workers waiting right now with free slots, for the dispatcher. */
  waiting(): FreeWorker[] {
    const out: FreeWorker[] = [];
    for (const w of this.waiters) if (w.waiter && w.waiter.free > 0) out.push({ workerId: w.id, free: w.waiter.free });
    return out;
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
    return true;
  }

  /** Hands leased jobs to a waiting worker. Returns false if it stopped waiting meanwhile. */
  deliver(workerId: string, jobs: Assignment[]): boolean {
    const worker = this.workers.get(workerId);
    if (!worker?.waiter) return false;
    this.answer(worker, jobs);
    return true;
  }

  isWaiting(workerId: string): boolean {
    return this.workers.get(workerId)?.waiter != null;
  }

  live(): { id: string; slots: number; lastSeenMs: number; waiting: boolean }[] {
    const cutoff = this.clock.nowMs() - this.liveWindowMs;
    const out = [];
    for (const w of this.workers.values()) {
      // A worker blocked in a poll is live even if its poll started long ago.
      if (w.waiter || w.lastSeenMs >= cutoff) out.push({ id: w.id, slots: w.slots, lastSeenMs: w.lastSeenMs, waiting: w.waiter != null });
    }
    return out;
  }

  /** Slots of live workers: the pool the fair-share cap is a fraction of (recounted at most once a second). */
  poolSlots(): number {
    const nowMs = this.clock.nowMs();
    if (this.slotsCache && nowMs - this.slotsCache.atMs < 1000 && nowMs >= this.slotsCache.atMs) return this.slotsCache.slots;
    const slots = this.live().reduce((sum, w) => sum + w.slots, 0);
    this.slotsCache = { atMs: nowMs, slots };
    return slots;
  }

  /** Drops workers silent for longer than the live window; returns their ids. */
  expire(): string[] {
    const cutoff = this.clock.nowMs() - this.liveWindowMs;
    const gone: string[] = [];
    for (const w of this.workers.values()) {
      if (!w.waiter && w.lastSeenMs < cutoff) {
        this.workers.delete(w.id);
        gone.push(w.id);
        this.slotsCache = null;
      }
    }
    return gone;
  }

  private answer(worker: KnownWorker, jobs: Assignment[]): void {
    const waiter = worker.waiter;
    if (!waiter) return;
    worker.waiter = null;
    this.waiters.delete(worker);
    worker.lastSeenMs = this.clock.nowMs();
    waiter.cancelTimer();
    waiter.resolve(jobs);
  }
}
