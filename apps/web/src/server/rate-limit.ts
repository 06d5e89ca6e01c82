/**
 * Failed sign-ins counted per key (a user name, a client address) over a sliding window.
 * Once a key has `maxFailures` failures within `windowMs`, it is refused until the oldest
 * of them leaves the window. It lives in the console process: a restart forgets it, and
 * each console process counts on its own.
 */
export class FailureLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly maxFailures: number,
    private readonly windowMs: number,
    private readonly nowMs: () => number = Date.now,
    /** Keys kept at most, so a flood of made-up names cannot grow the map without bound. */
    private readonly maxKeys = 10_000,
  ) {}

  private recent(key: string): number[] {
    const cutoff = this.nowMs() - this.windowMs;
    const kept = (this.failures.get(key) ?? []).filter((at) => at > cutoff);
    if (kept.length === 0) this.failures.delete(key);
    else this.failures.set(key, kept);
    return kept;
  }

  /** Seconds until the key may try again, or 0 when it may now. */
  retryAfterS(key: string): number {
    const recent = this.recent(key);
    if (recent.length < this.maxFailures) return 0;
    return Math.max(1, Math.ceil((recent[recent.length - this.maxFailures]! + this.windowMs - this.nowMs()) / 1000));
  }

  fail(key: string): void {
    if (!this.failures.has(key) && this.failures.size >= this.maxKeys) {
      // The oldest key goes first: Map keeps insertion order.
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    this.failures.set(key, [...this.recent(key), this.nowMs()]);
  }

  clear(key: string): void {
    this.failures.delete(key);
  }
}

export interface SignInLimits {
  /** Five wrong passwords for one name within a minute. */
  byName: FailureLimiter;
  /** Twenty failures from one client address within a minute. */
  byAddress: FailureLimiter;
  /**
   * At most a hundred refused sign-ins a minute written to the audit log, so a flood of
   * made-up names from made-up addresses cannot grow the log without bound.
   */
  audited: FailureLimiter;
}

const holder = globalThis as unknown as { fencelineSignInLimits?: SignInLimits };
export function signInLimits(): SignInLimits {
  holder.fencelineSignInLimits ??= { byName: new FailureLimiter(5, 60_000), byAddress: new FailureLimiter(20, 60_000), audited: new FailureLimiter(100, 60_000) };
  return holder.fencelineSignInLimits;
}
