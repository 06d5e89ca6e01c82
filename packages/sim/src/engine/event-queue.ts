/** One scheduled event of the simulation. */
export interface Scheduled {
  atMs: number;
  /** The order of scheduling; -1 once the event has run. */
  seq: number;
  label: string;
  fn: () => void;
  cancelled: boolean;
}

/** Earlier time first; at one time, the order of scheduling. */
function before(a: Scheduled, b: Scheduled): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && a.seq < b.seq);
}

/**
 * The simulation's event queue: a binary min-heap like core's Heap, specialised to
 * events so the comparison is a plain function call rather than a closure, since every
 * event of a run passes through it twice.
 */
export class EventQueue {
  private readonly items: Scheduled[] = [];

  get size(): number {
    return this.items.length;
  }

  peek(): Scheduled | undefined {
    return this.items[0];
  }

  push(item: Scheduled): void {
    const h = this.items;
    let at = h.length;
    h.push(item);
    while (at > 0) {
      const parent = (at - 1) >> 1;
      const p = h[parent]!;
      if (!before(item, p)) break;
      h[at] = p;
      at = parent;
    }
    h[at] = item;
  }

  pop(): Scheduled | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) this.siftDown(0, last);
    return top;
  }

  /** Drops every event `keep` rejects and restores the heap order in O(n); the order of the rest is unchanged. */
  retain(keep: (item: Scheduled) => boolean): void {
    const h = this.items;
    let n = 0;
    for (let i = 0; i < h.length; i++) if (keep(h[i]!)) h[n++] = h[i]!;
    h.length = n;
    for (let i = (n >> 1) - 1; i >= 0; i--) this.siftDown(i, h[i]!);
  }

  /** Places `item` at `at` or below it, moving smaller children up. */
  private siftDown(at: number, item: Scheduled): void {
    const h = this.items;
    const n = h.length;
    for (;;) {
      const left = at * 2 + 1;
      if (left >= n) break;
      const right = left + 1;
      const child = right < n && before(h[right]!, h[left]!) ? right : left;
      if (!before(h[child]!, item)) break;
      h[at] = h[child]!;
      at = child;
    }
    h[at] = item;
  }
}
