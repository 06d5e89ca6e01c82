/**
 * The run's trace: every event the simulation executes and every store write, as one
 * line each. The lines are folded into a 64-bit hash (two 32-bit multiplicative halves,
 * an FNV-1a and a second multiplicative hash with another odd constant, over the same characters) so a determinism test can
 * compare whole runs cheaply, and the last few hundred are kept so a violation can show
 * the events that led to it.
 *
 * Events and store writes are the bulk of a long run (tens of millions), so neither has
 * its line built when it happens: `addEvent` folds the time as a number and the label as
 * it is, and `addRecord` folds a write's values one by one (numbers as numbers, strings
 * as their characters). The line is only written out for the kept tail, when a report
 * asks for it.
 */
/** A record kept in the tail with the function that writes its line. */
interface KeptRecord<R> {
  record: R;
  format: (record: R) => string;
}
export class Trace {
  private lo = 0x811c9dc5;
  private hi = 0x84222325;
  /** The kept tail: a finished line, an event's time and label, or a record, to format later. */
  private readonly recentAt: number[] = [];
  private readonly recentText: (string | KeptRecord<never>)[] = [];
  private head = 0;
  count = 0;

  constructor(private readonly keep = 200) {}

  /** One executed event: its virtual time and its label. */
  addEvent(atMs: number, label: string): void {
    this.count++;
    // The time is folded as two 32-bit words (virtual time is far above 2^32 ms).
    this.foldNumber(atMs);
    this.foldChars(label);
    this.remember(atMs, label);
  }

  /** Any other line (a store write, an error). */
  add(line: string): void {
    this.count++;
    this.foldChars(line, 0xff);
    this.remember(-1, line);
  }

  /**
   * A record of flat values (a store write): each value is folded in the order of the
   * record's keys, numbers as two 32-bit words, strings by character, booleans and null as
   * markers, a nested record by its values, an array by its length. The keys themselves are
   * not folded: a record's kind (its first value) fixes them.
   */
  addRecord<R extends object>(record: R, format: (record: R) => string): void {
    this.count++;
    this.lo = Math.imul(this.lo ^ 0xfe, 0x01000193);
    this.hi = Math.imul(this.hi ^ 0xfe, 0x5bd1e995);
    this.foldValues(record as Record<string, unknown>, 0);
    if (this.keep > 0) this.remember(-1, { record, format } as unknown as KeptRecord<never>);
  }

  private foldValues(record: Record<string, unknown>, depth: number): void {
    for (const key in record) {
      const v = record[key];
      switch (typeof v) {
        case 'number':
          this.foldNumber(v);
          break;
        case 'string':
          this.foldString(v);
          break;
        case 'boolean':
          this.foldNumber(v ? -1 : -2);
          break;
        case 'object':
          if (v === null) this.foldNumber(-3);
          else if (Array.isArray(v)) this.foldNumber(v.length);
          else if (depth < 2) this.foldValues(v as Record<string, unknown>, depth + 1);
          break;
        default:
          this.foldNumber(-4);
      }
    }
  }

  private foldNumber(n: number): void {
    const low = n >>> 0;
    const high = Math.floor(n / 0x100000000) | 0;
    this.lo = Math.imul(Math.imul(this.lo ^ low, 0x01000193) ^ high, 0x01000193);
    this.hi = Math.imul(Math.imul(this.hi ^ low, 0x5bd1e995) ^ high, 0x5bd1e995);
  }

  private foldString(text: string): void {
    this.foldChars(text, 0xfd);
  }

  /** Folds the characters of `text`, after a `mark` byte that says what kind of text it is, if given. */
  private foldChars(text: string, mark?: number): void {
    let lo = mark === undefined ? this.lo : Math.imul(this.lo ^ mark, 0x01000193);
    let hi = mark === undefined ? this.hi : Math.imul(this.hi ^ mark, 0x5bd1e995);
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i);
      lo = Math.imul(lo ^ c, 0x01000193);
      hi = Math.imul(hi ^ c, 0x5bd1e995);
    }
    this.lo = lo;
    this.hi = hi;
  }

  hash(): string {
    return (this.hi >>> 0).toString(16).padStart(8, '0') + (this.lo >>> 0).toString(16).padStart(8, '0');
  }

  /** The most recent lines, oldest first. */
  tail(n = this.keep): string[] {
    const len = this.recentText.length;
    const order = len < this.keep ? [...Array(len).keys()] : [...Array(len).keys()].map((i) => (this.head + i) % len);
    const lines = order.map((i) => {
      const text = this.recentText[i]!;
      if (typeof text !== 'string') return text.format(text.record);
      return this.recentAt[i]! >= 0 ? `${this.recentAt[i]} ${text}` : text;
    });
    return lines.slice(Math.max(0, lines.length - n));
  }

  private remember(atMs: number, text: string | KeptRecord<never>): void {
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
