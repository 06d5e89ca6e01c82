/**
 * The best `k` of `items` in the order `before` (true when `a` comes first), in no
 * particular order. A bounded heap keeps the worst of the best k seen so far at its root,
 * so a pass over n items costs O(n log k): the dispatcher uses it to take a DAG's best
 * jobs and a round's best workers without sorting every ready job or every waiting worker.
 */
export function bestK<T>(items: Iterable<T>, k: number, before: (a: T, b: T) => boolean): T[] {
  const heap: T[] = [];
  if (k <= 0) return heap;
  const after = (a: T, b: T): boolean => before(b, a);
  const siftUp = (at: number): void => {
    while (at > 0) {
      const parent = (at - 1) >> 1;
      if (!after(heap[at]!, heap[parent]!)) return;
      [heap[at], heap[parent]] = [heap[parent]!, heap[at]!];
      at = parent;
    }
  };
  const siftDown = (at: number): void => {
    for (;;) {
      const left = at * 2 + 1;
      const right = left + 1;
      let top = at;
      if (left < heap.length && after(heap[left]!, heap[top]!)) top = left;
      if (right < heap.length && after(heap[right]!, heap[top]!)) top = right;
      if (top === at) return;
      [heap[at], heap[top]] = [heap[top]!, heap[at]!];
      at = top;
    }
  };
  for (const item of items) {
    if (heap.length < k) {
      heap.push(item);
      siftUp(heap.length - 1);
    } else if (before(item, heap[0]!)) {
      heap[0] = item;
      siftDown(0);
    }
  }
  return heap;
}
