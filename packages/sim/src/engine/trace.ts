/**
 * The run's trace: every event the simulation executes, as one line of text. The lines
 * are folded into a 64-bit FNV-1a hash (two 32-bit halves) so a determinism test can
 * compare whole runs cheaply, and the last few hundred are kept so a violation can show
 * the events that led to it.
 */
export class Trace {
  private lo = 0x84222325;
  private hi = 0xcbf29ce4;
  private readonly recent: string[] = [];
  private head = 0;
  count = 0;

  constructor(private readonly keep = 200) {}

  add(line: string): void {
    this.count++;
    let lo = this.lo;
    let hi = this.hi;
    for (let i = 0; i < line.length; i++) {
      lo ^= line.charCodeAt(i);
      // Multiply the 64-bit state by the FNV prime 0x100000001b3, in 32-bit halves.
      const l = Math.imul(lo, 0x1b3);
      const carry = Math.floor(((lo >>> 0) * 0x1b3) / 0x100000000);
      hi = (Math.imul(hi, 0x1b3) + Math.imul(lo, 0x100) + carry) >>> 0;
      lo = l >>> 0;
    }
    this.lo = lo;
    this.hi = hi;
    if (this.keep === 0) return;
    if (this.recent.length < this.keep) this.recent.push(line);
    else {
      this.recent[this.head] = line;
      this.head = (this.head + 1) % this.keep;
    }
  }

  hash(): string {
    return (this.hi >>> 0).toString(16).padStart(8, '0') + (this.lo >>> 0).toString(16).padStart(8, '0');
  }

  /** The most recent lines, oldest first. */
  tail(n = this.keep): string[] {
    const ordered = this.recent.length < this.keep ? [...this.recent] : [...this.recent.slice(this.head), ...this.recent.slice(0, this.head)];
    return ordered.slice(Math.max(0, ordered.length - n));
  }
}
