/**
 * A binary min-heap over a caller-supplied order. The worker pool keeps its liveness
 * checks in one, and the simulator its in-memory store's due-DAG and lease-expiry indexes,
 * so every hot operation is O(log n) however many workers, DAGs or jobs there are.
 */
export class Heap<T> {
  private readonly items: T[];

  /** `initial` is taken over (not copied) and put in heap order in O(n). */
  constructor(
    private readonly before: (a: T, b: T) => boolean,
    initial: T[] = [],
  ) {
    this.items = initial;
    for (let i = (initial.length >> 1) - 1; i >= 0; i--) this.siftDown(i);
  }

  get size(): number {
    return this.items.length;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  push(item: T): void {
    const h = this.items;
    h.push(item);
    let at = h.length - 1;
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!this.before(h[at]!, h[parent]!)) break;
      [h[at], h[parent]] = [h[parent]!, h[at]!];
      at = parent;
    }
  }

  pop(): T | undefined {
    const h = this.items;
    const top = h[0];
    const last = h.pop();
    if (h.length > 0 && last !== undefined) {
      h[0] = last;
      this.siftDown(0);
    }
    return top;
  }

  /** Puts the top back in order after the caller made it come later (one sift, not a pop and a push). */
  topChanged(): void {
    if (this.items.length > 1) this.siftDown(0);
  }

  /**
   * Visits items in heap order while `visit` returns true for them, without removing
   * anything: the children of an item are looked at only if the item itself was accepted.
   * This reads "everything due by now" off the top of an index in O(k log k).
   */
  walkWhile(visit: (item: T) => boolean): void {
    const h = this.items;
    if (h.length === 0) return;
    const frontier = new Heap<number>((a, b) => this.before(h[a]!, h[b]!));
    frontier.push(0);
    while (frontier.size > 0) {
      const i = frontier.pop()!;
      if (!visit(h[i]!)) continue;
      const left = 2 * i + 1;
      if (left < h.length) frontier.push(left);
      if (left + 1 < h.length) frontier.push(left + 1);
    }
  }

  private siftDown(at: number): void {
    const h = this.items;
    for (;;) {
      const left = at * 2 + 1;
      const right = left + 1;
      let top = at;
      if (left < h.length && this.before(h[left]!, h[top]!)) top = left;
      if (right < h.length && this.before(h[right]!, h[top]!)) top = right;
      if (top === at) return;
      [h[at], h[top]] = [h[top]!, h[at]!];
      at = top;
    }
  }
}
