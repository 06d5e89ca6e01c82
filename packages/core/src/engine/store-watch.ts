import type { Clock } from '../clock';
import { isStoreUnavailable, StoreUnavailableError } from '../unavailable';

/** What the watch tells the node; the node turns it into log lines, metrics and a reconnect. */
export interface StoreWatchHooks {
  /** A call had no answer within the deadline: it has been failed, and the connections should be replaced. */
  stalled(method: string, waitedMs: number, stillWaiting: number): void;
  /** The first call of an outage failed as unavailable. */
  outageBegan(method: string, err: StoreUnavailableError): void;
  /** A call succeeded again after an outage that lasted `durationMs` (from its first failure). */
  outageEnded(durationMs: number, failedCalls: number): void;
}

interface InFlight {
  method: string;
  startedMs: number;
  fail: (err: unknown) => void;
}

/** Store methods that are not calls with an answer to wait for. */
const UNWATCHED = new Set(['subscribe', 'close', 'reconnect', 'constructor']);

/**
 * Watches every call a node makes to its store. A call gets a deadline: one still without
 * an answer after `deadlineMs` is failed with StoreUnavailableError, as a lost connection
 * is, so whatever waits on it (a batch of results, a loop) moves on and tries again, and
 * the node is told so it can replace its connections. It also tells when the store becomes
 * unreachable and when it answers again (calls succeeding, none failing, for settleMs), so
 * an outage is one line at each end rather than a line per failed call.
 *
 * No timer is set per call: calls are kept in the order they started (a Set keeps
 * insertion order), and `check`, run by one timer of the node every second or so, fails
 * the overdue ones at the head. A call costs a clock read and a Set entry.
 */
export class StoreWatch {
  private readonly inFlight = new Set<InFlight>();
  private outageSinceMs: number | null = null;
  private failedDuringOutage = 0;
  /** During an outage, when calls began to succeed again with no failure since. */
  private answeringSinceMs: number | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly deadlineMs: number,
    private readonly hooks: StoreWatchHooks,
    /**
     * How long calls must succeed with none failing before an outage counts as over. In a
     * failover some calls succeed and some fail for a while, and that is one outage, not
     * a dozen.
     */
    private readonly settleMs = 5_000,
  ) {}

  /** The store with every call watched; the same object's other properties are passed through. */
  wrap<S extends object>(store: S): S {
    const wrappers = new Map<string | symbol, unknown>();
    return new Proxy(store, {
      get: (target, prop) => {
        const cached = wrappers.get(prop);
        if (cached !== undefined) return cached;
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        const method = value as (...args: unknown[]) => unknown;
        const wrapped = typeof prop === 'string' && !UNWATCHED.has(prop) ? this.watched(prop, method.bind(target)) : method.bind(target);
        wrappers.set(prop, wrapped);
        return wrapped;
      },
    });
  }

  /** How many calls are waiting for an answer now, and how long the oldest has waited. */
  pending(): { calls: number; oldestMs: number } {
    const first = this.inFlight.values().next();
    return { calls: this.inFlight.size, oldestMs: first.done ? 0 : this.clock.nowMs() - first.value.startedMs };
  }

  /** True from a call's failure as unavailable until a call succeeds. */
  get inOutage(): boolean {
    return this.outageSinceMs !== null;
  }

  /** Fails every call that has waited longer than the deadline, and ends an outage whose calls have succeeded for settleMs. */
  check(): void {
    const now = this.clock.nowMs();
    if (this.outageSinceMs !== null && this.answeringSinceMs !== null && now - this.answeringSinceMs >= this.settleMs) {
      const durationMs = this.answeringSinceMs - this.outageSinceMs;
      const failed = this.failedDuringOutage;
      this.outageSinceMs = null;
      this.answeringSinceMs = null;
      this.failedDuringOutage = 0;
      this.hooks.outageEnded(durationMs, failed);
    }
    let oldest: InFlight | null = null;
    let failed = 0;
    for (const call of this.inFlight) {
      if (now - call.startedMs <= this.deadlineMs) break;
      this.inFlight.delete(call);
      oldest ??= call;
      failed++;
      const err = new StoreUnavailableError(`the database did not answer ${call.method} within ${this.deadlineMs} ms`);
      this.unavailable(call.method, err);
      call.fail(err);
    }
    if (oldest) this.hooks.stalled(oldest.method, now - oldest.startedMs, failed);
  }

  private watched(method: string, call: (...args: unknown[]) => unknown): (...args: unknown[]) => unknown {
    return (...args: unknown[]) => {
      const result = call(...args);
      if (!(result instanceof Promise)) return result;
      return new Promise((resolve, reject) => {
        const entry: InFlight = { method, startedMs: this.clock.nowMs(), fail: reject };
        this.inFlight.add(entry);
        result.then(
          (value) => {
            // A call the deadline already failed is gone from the set; its late answer is dropped.
            if (!this.inFlight.delete(entry)) return;
            this.answered();
            resolve(value);
          },
          (err: unknown) => {
            if (!this.inFlight.delete(entry)) return;
            if (isStoreUnavailable(err)) this.unavailable(method, err);
            else this.answered();
            reject(err);
          },
        );
      });
    };
  }

  /**
   * A call got an answer (a refusal is an answer too): an outage, if one is on, ends once
   * calls have kept succeeding for settleMs (check), and its length runs to this first one.
   */
  private answered(): void {
    if (this.outageSinceMs === null || this.answeringSinceMs !== null) return;
    this.answeringSinceMs = this.clock.nowMs();
  }

  private unavailable(method: string, err: StoreUnavailableError): void {
    this.failedDuringOutage++;
    this.answeringSinceMs = null;
    if (this.outageSinceMs !== null) return;
    this.outageSinceMs = this.clock.nowMs();
    this.hooks.outageBegan(method, err);
  }
}
