import type { Timers } from '../clock';
import { isStoreUnavailable } from '../unavailable';

export interface BatcherOptions<T = unknown> {
  /** How long the first item of a batch waits for company; 0 means the next timer turn. */
  windowMs: number;
  /** A batch never holds more items than this; a full batch goes at once. */
  maxBatch: number;
  /**
   * Batches allowed in flight at once. While that many are out, new items gather into the
   * next batch, so batches grow with load by themselves and a quiet system pays no wait.
   */
  maxInFlight?: number;
  /**
   * What an item weighs toward `maxWeight` (default 1): a run with 5,000 jobs should fill a
   * batch of run starts as much as 5,000 runs of one job do.
   */
  weight?: (item: T) => number;
  /** A batch never weighs more than this, except a single item that weighs more alone. */
  maxWeight?: number;
}

interface Pending<T, R> {
  item: T;
  resolve: (r: R) => void;
  reject: (e: unknown) => void;
}

/**
 * Collects items from many callers and hands them to one batch call, so a thousand
 * workers renewing or completing at once cost a few store statements instead of a
 * thousand commits. Each caller gets back the result for its own item.
 *
 * A batch call that fails is tried again for each of its items alone, so one caller's
 * item the store cannot take fails only that caller, and the error it hears is about its
 * own item, never about the items it happened to share a statement with. This needs a
 * batch call that writes all of its items or none (one statement, or one transaction),
 * which every store batch call is. A store that cannot be reached is the exception: it
 * would refuse every item alone too, so that error is passed to every item at once.
 */
export class Batcher<T, R> {
  private pending: Pending<T, R>[] = [];
  private cancel: (() => void) | null = null;
  private inFlight = 0;
  private readonly windowMs: number;
  private readonly maxBatch: number;
  private readonly maxInFlight: number;
  private readonly weight: ((item: T) => number) | null;
  private readonly maxWeight: number;
  private pendingWeight = 0;

  constructor(
    private readonly timers: Timers,
    options: BatcherOptions<T>,
    /** Must return one result per item, in order. */
    private readonly run: (items: T[]) => Promise<R[]>,
  ) {
    this.windowMs = options.windowMs;
    this.maxBatch = Math.max(1, options.maxBatch);
    this.maxInFlight = Math.max(1, options.maxInFlight ?? Number.POSITIVE_INFINITY);
    this.weight = options.weight ?? null;
    this.maxWeight = options.maxWeight ?? Number.POSITIVE_INFINITY;
  }

  private full(): boolean {
    return this.pending.length >= this.maxBatch || this.pendingWeight >= this.maxWeight;
  }

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.weight) this.pendingWeight += this.weight(item);
      if (this.full() && this.inFlight < this.maxInFlight) this.flush();
      else this.arm();
    });
  }

  submitMany(items: T[]): Promise<R[]> {
    return Promise.all(items.map((i) => this.submit(i)));
  }

  /** Sends what has gathered now (up to maxBatch), unless maxInFlight batches are out. */
  flush(): void {
    this.cancel?.();
    this.cancel = null;
    if (this.pending.length === 0 || this.inFlight >= this.maxInFlight) return;
    const batch = this.pending.splice(0, this.take());
    this.inFlight++;
    let settled: Promise<R[]>;
    try {
      settled = this.run(batch.map((b) => b.item));
    } catch (err) {
      settled = Promise.reject(err);
    }
    settled
      .then(
        (results) => batch.forEach((b, i) => b.resolve(results[i] as R)),
        (err) => (batch.length > 1 && !isStoreUnavailable(err) ? this.eachAlone(batch) : batch.forEach((b) => b.reject(err))),
      )
      .finally(() => {
        this.inFlight--;
        // What gathered meanwhile goes now: it has waited a whole batch already.
        if (this.pending.length > 0) this.flush();
      });
    if (this.full()) this.flush();
    else if (this.pending.length > 0) this.arm();
  }

  /** Runs each item of a failed batch in a call of its own, and answers it with its own outcome. */
  private async eachAlone(batch: Pending<T, R>[]): Promise<void> {
    await Promise.all(
      batch.map(async (b) => {
        try {
          const [result] = await this.run([b.item]);
          b.resolve(result as R);
        } catch (err) {
          b.reject(err);
        }
      }),
    );
  }

  /** How many pending items the next batch takes: up to maxBatch and maxWeight, at least one. */
  private take(): number {
    const weigh = this.weight;
    if (!weigh) return this.maxBatch;
    let n = 0;
    let total = 0;
    for (const p of this.pending) {
      const w = weigh(p.item);
      if (n >= this.maxBatch || (n > 0 && total + w > this.maxWeight)) break;
      total += w;
      n++;
    }
    this.pendingWeight -= total;
    return n;
  }

  private arm(): void {
    if (this.cancel || this.inFlight >= this.maxInFlight) return;
    this.cancel = this.timers.after(this.windowMs, () => {
      this.cancel = null;
      this.flush();
    });
  }
}
