/**
 * The request key a console write carries so that it happens once (a trigger, a run action).
 *
 * A key is held from the first click until KEY_KEPT_MS after the request is answered, and
 * every click of the same request (the same fingerprint: the same DAG and params, the same
 * action on the same tasks) inside that time sends the same key. The store answers a repeated
 * key with its first answer, so a double click, an impatient second click after the answer or
 * a retried request queues one run. A click with a different fingerprint, or one after the
 * window, gets a fresh key: that is a new request, never a repeat.
 */

/** How long a key stays in use after its request was answered. */
export const KEY_KEPT_MS = 10_000;

/** A random key; getRandomValues, unlike randomUUID, works on a console served over plain http. */
export function randomRequestKey(): string {
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, '0')).join('');
}

interface Held {
  key: string;
  fingerprint: string;
  /** When its request was last answered; null while one is out. */
  answeredAt: number | null;
}

export interface RequestKeysOptions {
  keptMs?: number;
  now?: () => number;
  newKey?: () => string;
}

/** The key of one control's requests; owned by the control, changed only through these calls. */
export class RequestKeys {
  private held: Held | null = null;
  private readonly keptMs: number;
  private readonly now: () => number;
  private readonly newKey: () => string;

  constructor(options: RequestKeysOptions = {}) {
    this.keptMs = options.keptMs ?? KEY_KEPT_MS;
    this.now = options.now ?? (() => Date.now());
    this.newKey = options.newKey ?? randomRequestKey;
    if (!(this.keptMs >= 0)) throw new Error('keptMs must be zero or more');
  }

  /** The key to send for a request with this fingerprint; marks a request as out under it. */
  keyFor(fingerprint: string): string {
    const h = this.held;
    const reusable = h !== null && h.fingerprint === fingerprint && (h.answeredAt === null || this.now() - h.answeredAt < this.keptMs);
    if (!reusable) this.held = { key: this.newKey(), fingerprint, answeredAt: null };
    else h.answeredAt = null;
    return this.held!.key;
  }

  /**
   * The request sent under `key` was answered (a run, a refusal or no answer at all): the key is
   * kept for the window from now. A refusal keeps it too, since a request that got no answer may
   * still have landed, and sending it again must not do it twice.
   */
  answered(key: string): void {
    if (this.held?.key === key) this.held.answeredAt = this.now();
  }

  /** Until when (ms since the epoch) a click of `fingerprint` still repeats the last request; null if it would start a new one. */
  keptUntil(fingerprint: string): number | null {
    const h = this.held;
    if (h === null || h.fingerprint !== fingerprint || h.answeredAt === null) return null;
    const until = h.answeredAt + this.keptMs;
    return until > this.now() ? until : null;
  }
}

/** A request's fingerprint: its input less the key, with object keys in order so equal inputs match. */
export function fingerprintOf(input: unknown): string {
  return JSON.stringify(input, (_k, v: unknown) =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
