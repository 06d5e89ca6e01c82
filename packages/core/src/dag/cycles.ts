import type { DagIssue } from '../errors';
import { buildGraphIndex, type GraphIndex } from './graph';
import type { LooseTask } from './spec-shape';

/** At most this many cycle issues are listed one by one; the rest are summarised. */
const MAX_CYCLE_ISSUES = 20;

/**
 * The strongly connected components of more than one task (Tarjan's algorithm with an
 * explicit stack, so a 20,000-task chain cannot overflow the call stack), each sorted, in
 * the order of their first task.
 */
function loops(g: GraphIndex): number[][] {
  const n = g.ids.length;
  const order = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const components: number[][] = [];
  let counter = 0;
  const frames: { v: number; edge: number }[] = [];
  for (let s = 0; s < n; s++) {
    if (order[s] !== -1) continue;
    order[s] = low[s] = counter++;
    stack.push(s);
    onStack[s] = 1;
    frames.push({ v: s, edge: 0 });
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const out = g.dependents[frame.v]!;
      if (frame.edge < out.length) {
        const w = out[frame.edge++]!;
        if (order[w] === -1) {
          order[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          frames.push({ v: w, edge: 0 });
        } else if (onStack[w]) {
          low[frame.v] = Math.min(low[frame.v]!, order[w]!);
        }
        continue;
      }
      frames.pop();
      const v = frame.v;
      const parent = frames[frames.length - 1];
      if (parent !== undefined) low[parent.v] = Math.min(low[parent.v]!, low[v]!);
      if (low[v] === order[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        if (component.length > 1) components.push(component);
      }
    }
  }
  components.forEach((c) => c.sort((a, b) => a - b));
  components.sort((a, b) => a[0]! - b[0]!);
  return components;
}

/**
 * A shortest cycle through the first task of a strongly connected component, found by a
 * breadth-first search that stays inside the component. Every member reaches every
 * other, so the search always gets back to the start.
 */
function cycleThrough(g: GraphIndex, component: number[]): number[] {
  const inside = new Set(component);
  const start = component[0]!;
  const parent = new Map<number, number>([[start, -1]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (const w of g.dependents[v]!) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path: number[] = [];
        for (let at = v; at !== -1; at = parent.get(at)!) path.push(at);
        return path.reverse();
      }
      if (parent.has(w)) continue;
      parent.set(w, v);
      queue.push(w);
    }
  }
  return component;
}

/**
 * Cycles in the dependency graph. Each strongly connected component with more than one
 * task is one issue naming a concrete cycle through it; self-dependencies are reported by
 * the dependsOn checks and ignored here.
 */
export function checkCycles(tasks: LooseTask[], issues: DagIssue[]): void {
  const named = tasks.filter((t): t is LooseTask & { id: string } => t.id !== undefined);
  const g = buildGraphIndex({ tasks: named });
  const firstPosition = new Map<string, number>();
  for (const t of named) if (!firstPosition.has(t.id)) firstPosition.set(t.id, t.position);
  const components = loops(g);

  components.slice(0, MAX_CYCLE_ISSUES).forEach((component) => {
    const cycle = cycleThrough(g, component);
    const ids = cycle.map((i) => g.ids[i]!);
    const others = component.length - cycle.length;
    issues.push({
      kind: 'cycle',
      path: `tasks.${firstPosition.get(ids[0]!)}.dependsOn`,
      message:
        `cycle: ${[...ids, ids[0]].join(' -> ')} (each task depends on the one before it), so none of them can ever start. ` +
        `Remove one of these dependencies${others > 0 ? `; ${others} more tasks are caught in the same loop` : ''}.`,
      taskIds: ids,
    });
  });
  if (components.length > MAX_CYCLE_ISSUES) {
    const rest = components.slice(MAX_CYCLE_ISSUES);
    issues.push({
      kind: 'more-cycles',
      path: 'tasks',
      message: `${rest.length} more cycles (involving ${rest.reduce((s, c) => s + c.length, 0)} tasks) are not listed one by one; fix the ones above and validate again.`,
      taskIds: rest.flatMap((c) => c.map((i) => g.ids[i]!)),
    });
  }
}
