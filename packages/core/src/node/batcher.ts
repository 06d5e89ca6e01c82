import type { Timers } from '../clock';

/**
 * Collects items from many callers for a short window and hands them to one batch
 * call, so a thousand workers renewing at once cost a few store statements instead of
 * a thousand. Each caller gets back the result for its own item.
 */
export class Batcher<T, R> {
  private pending: { item: T; resolve: (r: R) => void; reject: (e: unknown) => void }[] = [];
  private cancel: (() => void) | null = null;

  constructor(
    private readonly timers: Timers,
    private readonly windowMs: number,
    private readonly maxBatch: number,
    /** Must return one result per item, in order. */
    private readonly run: (items: T[]) => Promise<R[]>,
  ) {}

  submit(item: T): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      if (this.pending.length >= this.maxBatch) this.flush();
      else if (!this.cancel) this.cancel = this.timers.after(this.windowMs, () => this.flush());
    });
  }

  submitMany(items: T[]): Promise<R[]> {
    return Promise.all(items.map((i) => this.submit(i)));
  }

  flush(): void {
    this.cancel?.();
    this.cancel = null;
    const batch = this.pending.splice(0, this.pending.length);
    if (batch.length === 0) return;
    this.run(batch.map((b) => b.item)).then(
      (results) => batch.forEach((b, i) => b.resolve(results[i] as R)),
      (err) => batch.forEach((b) => b.reject(err)),
    );
  }
}
