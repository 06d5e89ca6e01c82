/**
 * The run's trace: every event the simulation executes and every store write, as one
 * line each. The lines are folded into a 64-bit hash (two 32-bit multiplicative halves,
 * an FNV-1a and a second multiplicative hash with another odd constant, over the same characters) so a determinism test can
 * compare whole runs cheaply, and the last few hundred are kept so a violation can show
 * the events that led to it.
 *
 * Events are the bulk of a long run (tens of millions), so `addEvent` folds the time as a
 * number and the label as it is, without building the line; the line is only written out
 * for the kept tail, when a report asks for it.
 */
export class Trace {
  private lo = 0x811c9dc5;
  private hi = 0x84222325;
  /** The kept tail: either a finished line, or an event's time and label to format later. */
  private readonly recentAt: number[] = [];
  private readonly recentText: string[] = [];
  private head = 0;
  count = 0;

  constructor(private readonly keep = 200) {}

  /** One executed event: its virtual time and its label. */
  addEvent(atMs: number, label: string): void {
    this.count++;
    // The time is folded as two 32-bit words (virtual time is far above 2^32 ms).
    const low = atMs >>> 0;
    const high = Math.floor(atMs / 0x100000000);
    let lo = Math.imul(Math.imul(this.lo ^ low, 0x01000193) ^ high, 0x01000193);
    let hi = Math.imul(Math.imul(this.hi ^ low, 0x5bd1e995) ^ high, 0x5bd1e995);
    for (let i = 0; i < label.length; i++) {
      const c = label.charCodeAt(i);
      lo = Math.imul(lo ^ c, 0x01000193);
      hi = Math.imul(hi ^ c, 0x5bd1e995);
    }
    this.lo = lo;
    this.hi = hi;
    this.remember(atMs, label);
  }

  /** Any other line (a store write, an error). */
  add(line: string): void {
    this.count++;
    let lo = Math.imul(this.lo ^ 0xff, 0x01000193);
    let hi = Math.imul(this.hi ^ 0xff, 0x5bd1e995);
    for (let i = 0; i < line.length; i++) {
      const c = line.charCodeAt(i);
      lo = Math.imul(lo ^ c, 0x01000193);
      hi = Math.imul(hi ^ c, 0x5bd1e995);
    }
    this.lo = lo;
    this.hi = hi;
    this.remember(-1, line);
  }

  hash(): string {
    return (this.hi >>> 0).toString(16).padStart(8, '0') + (this.lo >>> 0).toString(16).padStart(8, '0');
  }

  /** The most recent lines, oldest first. */
  tail(n = this.keep): string[] {
    const len = this.recentText.length;
    const order = len < this.keep ? [...Array(len).keys()] : [...Array(len).keys()].map((i) => (this.head + i) % len);
    const lines = order.map((i) => (this.recentAt[i]! >= 0 ? `${this.recentAt[i]} ${this.recentText[i]}` : this.recentText[i]!));
    return lines.slice(Math.max(0, lines.length - n));
  }

  private remember(atMs: number, text: string): void {
    if (this.keep === 0) return;
    if (this.recentText.length < this.keep) {
      this.recentAt.push(atMs);
      this.recentText.push(text);
    } else {
      this.recentAt[this.head] = atMs;
      this.recentText[this.head] = text;
      this.head = (this.head + 1) % this.keep;
    }
  }
}
