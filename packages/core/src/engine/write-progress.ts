import type { Clock } from '../clock';

/** What the check tells the node; the node turns it into a log line, metrics and a recovery. */
export interface WriteProgressHooks {
  /** Results have waited `stalledMs` with no write answered: the first step is to replace the store connections. */
  stalled(stalledMs: number, waiting: number): void;
  /** Still no write answered a whole window after `stalled`: the node gives up its shards. */
  stillStalled(stalledMs: number, waiting: number): void;
  /** A write was answered again after a stall that lasted `stalledMs`. */
  progressed(stalledMs: number): void;
}

/**
 * Watches the node's result-write path as a whole, from the moment a worker's result
 * reaches the node to the store's answer. A single call past its deadline is the store
 * watch's business (StoreWatch); this catches what that cannot see: writes that fail fast
 * again and again (a pool on a server in recovery answers every statement with an error
 * at once), and results that never reach the store at all (a batch that never goes out).
 *
 * The path is stalled when no write has been answered since the first result that got no
 * answer, and either results have waited here for `windowMs` since that one, or results
 * kept coming and failing for `windowMs` after it (a worker whose sends fail tries again).
 * Failures that stop within the window are an outage that passed, or a worker that took
 * its results to another node: nothing waits here, and it is forgotten. An answer that
 * refuses a result is progress too: the store answered.
 *
 * Like StoreWatch it sets no timer of its own: `check` runs on the node's store-watch loop.
 */
export class WriteProgress {
  /** Results handed to the path and not yet settled. */
  private waiting = 0;
  /** The first result handed in since the last answered write; null while none waits for one. */
  private unservedSinceMs: number | null = null;
  /** When a result last arrived. */
  private lastArrivalMs = Number.NEGATIVE_INFINITY;
  /** When the stall was reported (step one), and whether step two has run. */
  private stalledAtMs: number | null = null;
  private escalatedAtMs: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly windowMs: number,
    private readonly hooks: WriteProgressHooks,
  ) {}

  /** Wraps one write of `count` results: counts them as waiting until the write settles. */
  async track<T>(count: number, write: () => Promise<T>): Promise<T> {
    const now = this.clock.nowMs();
    this.waiting += count;
    this.lastArrivalMs = now;
    this.unservedSinceMs ??= now;
    try {
      const value = await write();
      this.answered();
      return value;
    } finally {
      this.waiting -= count;
    }
  }

  /** The store answered a write (whatever it said): the path moves. */
  answered(): void {
    const since = this.unservedSinceMs;
    this.unservedSinceMs = null;
    if (this.stalledAtMs === null || since === null) return;
    this.stalledAtMs = null;
    this.escalatedAtMs = null;
    this.hooks.progressed(this.clock.nowMs() - since);
  }

  /** True from a reported stall until a write is answered. */
  get stalled(): boolean {
    return this.stalledAtMs !== null;
  }

  /**
   * For one window after the node gave up its shards it takes none: a healthy node gets
   * them meanwhile. Only one window, since when every node's store is down every node gives
   * up, and with no shard led no job runs and no result comes to prove the path moves again.
   */
  standingAside(): boolean {
    return this.escalatedAtMs !== null && this.clock.nowMs() - this.escalatedAtMs < this.windowMs;
  }

  /** Reports a stall once, and escalates it once, a window apart. */
  check(): void {
    const since = this.unservedSinceMs;
    if (since === null) return;
    const now = this.clock.nowMs();
    const waited = this.waiting > 0 && now - since >= this.windowMs;
    if (this.stalledAtMs === null) {
      if (this.waiting === 0 && now - this.lastArrivalMs >= this.windowMs) {
        // Nothing waits here, and nothing came for a window: start afresh.
        this.unservedSinceMs = null;
        return;
      }
      if (!waited && this.lastArrivalMs - since < this.windowMs) return;
      this.stalledAtMs = now;
      this.hooks.stalled(now - since, this.waiting);
      return;
    }
    // Escalate only while the path is still asked to write: results wait, or came since the report.
    const stillAsked = this.waiting > 0 || this.lastArrivalMs > this.stalledAtMs;
    if (this.escalatedAtMs === null && stillAsked && now - this.stalledAtMs >= this.windowMs) {
      this.escalatedAtMs = now;
      this.hooks.stillStalled(now - since, this.waiting);
    }
  }
}
