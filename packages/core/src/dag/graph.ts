/**
 * Graph helpers over a DAG spec. Edges point from a task to the tasks that depend on it
 * (upstream to downstream), which is the direction work flows and the direction the
 * console draws arrows.
 *
 * These helpers expect a spec that passed validateDag. On a raw spec they stay total:
 * a duplicate task id keeps its first occurrence, dependencies on unknown tasks and on
 * the task itself are ignored, and a repeated dependency counts once. Only topoOrder
 * and layers refuse a cycle, because they cannot give a meaningful answer for one.
 */

/** The part of a spec the graph helpers read; a full DagSpec fits. */
export interface GraphSpec {
  tasks: readonly { id: string; dependsOn: readonly string[] }[];
}

/** A spec turned into integer adjacency lists, so traversals cost O(tasks + edges). */
export interface GraphIndex {
  /** Task ids in spec order (first occurrence of a duplicate id only). */
  ids: string[];
  indexOf: Map<string, number>;
  /** Distinct, known, non-self dependencies of each task, in the order the spec lists them. */
  deps: number[][];
  /** Tasks that depend on each task, in spec order. */
  dependents: number[][];
  /** Where each task stands in `spec.tasks`. */
  positions: number[];
}

export function buildGraphIndex(spec: GraphSpec): GraphIndex {
  const ids: string[] = [];
  const indexOf = new Map<string, number>();
  const taskOfIndex: number[] = [];
  spec.tasks.forEach((task, position) => {
    if (indexOf.has(task.id)) return;
    indexOf.set(task.id, ids.length);
    ids.push(task.id);
    taskOfIndex.push(position);
  });
  const deps: number[][] = ids.map(() => []);
  const dependents: number[][] = ids.map(() => []);
  // lastListedBy[d] === i marks d as already listed by task i, which skips repeated
  // dependencies without allocating a set per task.
  const lastListedBy = new Int32Array(ids.length).fill(-1);
  for (let i = 0; i < ids.length; i++) {
    const task = spec.tasks[taskOfIndex[i]!]!;
    for (const depId of task.dependsOn) {
      const d = indexOf.get(depId);
      if (d === undefined || d === i || lastListedBy[d] === i) continue;
      lastListedBy[d] = i;
      deps[i]!.push(d);
      dependents[d]!.push(i);
    }
  }
  return { ids, indexOf, deps, dependents, positions: taskOfIndex };
}

const indexes = new WeakMap<GraphSpec, GraphIndex>();

/**
 * The graph index of a spec that is no longer changed (a stored DAG version), built once
 * and kept for as long as the spec object lives. A leader starts every run of a version
 * from the same spec object, and looks a task up by id for every lease it grants: with
 * a 20,000-task DAG, a scan of the task list per lease and an index per run added up.
 * The index is shared, so its callers must not change it.
 */
export function graphIndexOf(spec: GraphSpec): GraphIndex {
  let g = indexes.get(spec);
  if (!g) {
    g = buildGraphIndex(spec);
    indexes.set(spec, g);
  }
  return g;
}

/** Tasks with no dependencies, in spec order: they are ready as soon as a run starts. */
export function roots(spec: GraphSpec): string[] {
  const g = buildGraphIndex(spec);
  return g.ids.filter((_, i) => g.deps[i]!.length === 0);
}

/** For every task, the tasks that depend on it directly (every task has an entry). */
export function dependentsMap(spec: GraphSpec): Map<string, string[]> {
  const g = buildGraphIndex(spec);
  const out = new Map<string, string[]>();
  g.ids.forEach((id, i) =>
    out.set(
      id,
      g.dependents[i]!.map((d) => g.ids[d]!),
    ),
  );
  return out;
}

/**
 * Every task that depends on `taskId` directly or transitively, nearest first
 * (breadth-first), without `taskId` itself. These are the tasks a final failure of
 * `taskId` marks upstream_failed.
 */
export function downstreamClosure(spec: GraphSpec, taskId: string): string[] {
  const g = buildGraphIndex(spec);
  const start = g.indexOf.get(taskId);
  if (start === undefined) throw new Error(`downstreamClosure: "${taskId}" is not a task of this DAG`);
  return closureOf(g, start).map((i) => g.ids[i]!);
}

/** Breadth-first closure over `dependents` from `start`, excluding `start`. Iterative, so depth does not matter. */
export function closureOf(g: Pick<GraphIndex, 'dependents'>, start: number): number[] {
  const seen = new Set<number>([start]);
  const out: number[] = [];
  for (let head = -1; head < out.length; head++) {
    const from = head < 0 ? start : out[head]!;
    for (const next of g.dependents[from]!) {
      if (seen.has(next)) continue;
      seen.add(next);
      out.push(next);
    }
  }
  return out;
}

/**
 * A topological order (every task after all its dependencies). Kahn's algorithm with
 * a FIFO seeded in spec order, so the result is deterministic and close to the order
 * the author wrote. Throws on a cycle.
 */
export function topoOrder(spec: GraphSpec): string[] {
  const g = buildGraphIndex(spec);
  return topoIndices(g).map((i) => g.ids[i]!);
}

function topoIndices(g: GraphIndex): number[] {
  const remaining = g.deps.map((d) => d.length);
  const order: number[] = [];
  for (let i = 0; i < remaining.length; i++) if (remaining[i] === 0) order.push(i);
  for (let head = 0; head < order.length; head++) {
    for (const next of g.dependents[order[head]!]!) {
      remaining[next]!--;
      if (remaining[next] === 0) order.push(next);
    }
  }
  if (order.length !== g.ids.length) {
    throw new Error('topoOrder: the DAG has a cycle; validate it with validateDag first');
  }
  return order;
}

/**
 * Longest-path layering: roots are layer 0 and every other task sits one layer below
 * its deepest dependency, so every edge points to a later layer. Within a layer tasks
 * keep spec order. This is what the console uses to lay a DAG out left to right.
 */
export function layers(spec: GraphSpec): string[][] {
  const g = buildGraphIndex(spec);
  const order = topoIndices(g);
  const depth = new Array<number>(g.ids.length).fill(0);
  let deepest = -1;
  for (const i of order) {
    let d = 0;
    for (const dep of g.deps[i]!) d = Math.max(d, depth[dep]! + 1);
    depth[i] = d;
    deepest = Math.max(deepest, d);
  }
  const out: string[][] = Array.from({ length: deepest + 1 }, () => []);
  for (let i = 0; i < g.ids.length; i++) out[depth[i]!]!.push(g.ids[i]!);
  return out;
}
