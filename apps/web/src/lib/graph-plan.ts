import { layeredPositions, NODE_HEIGHT, NODE_WIDTH } from '@/components/layout';

/**
 * One node a DAG drawing shows (on the DAG and run pages and in the simulator's replay):
 * a task, or a group of tasks shown by their counts per state.
 */
export interface PlannedNode {
  id: string;
  kind: 'task' | 'group';
  /** Indices into the drawn DAG's tasks: one for a task node, the members for a group. */
  members: number[];
  /** Node ids this node depends on (a group stands for its members' dependencies). */
  dependsOn: string[];
}

export interface DrawingPlan {
  nodes: PlannedNode[];
  /** Per task, the id of the node that draws it. */
  nodeOfTask: string[];
  positions: Map<string, { x: number; y: number }>;
}

export interface PlanLimits {
  /** Up to this many tasks, every task is drawn on its own. */
  drawAllUpTo: number;
  /** Siblings shown on their own before the rest of them are grouped. */
  showEach: number;
  /** At most this many nodes in all; what is left over becomes one last group. */
  maxNodes: number;
}

/**
 * React Flow keeps every drawn node in the DOM, and 10,000 nodes recoloured sixty times a
 * second would not keep up; the fan-out's jobs are interchangeable anyway. Forty tasks are
 * still easy to read one by one.
 */
export const PLAN_LIMITS: PlanLimits = { drawAllUpTo: 40, showEach: 6, maxNodes: 120 };

/** A group node's height with its count, its first … last range, the state bar and two lines of counts. */
export const GROUP_HEIGHT = 104;

/**
 * Decides which tasks are drawn on their own. Tasks with the same dependencies and the same
 * dependents (the children of a fan-out, the middle of a diamond) are siblings: when there
 * are many, the first few are drawn and the rest become one group node. A DAG that is still
 * too large after that (a very long chain) keeps its first nodes and groups the remainder.
 */
export function planDrawing(tasks: readonly { id: string; dependsOn: readonly string[] }[], limits: PlanLimits = PLAN_LIMITS): DrawingPlan {
  const index = new Map(tasks.map((t, i) => [t.id, i]));
  const nodeOfTask: string[] = tasks.map((t) => t.id);
  let nodes: PlannedNode[];
  if (tasks.length <= limits.drawAllUpTo) {
    nodes = tasks.map((t, i) => ({ id: t.id, kind: 'task', members: [i], dependsOn: [] }));
  } else {
    const dependents: string[][] = tasks.map(() => []);
    tasks.forEach((t) => {
      for (const d of t.dependsOn) {
        const i = index.get(d);
        if (i !== undefined) dependents[i]!.push(t.id);
      }
    });
    const classes = new Map<string, number[]>();
    tasks.forEach((t, i) => {
      const key = `${[...t.dependsOn].sort().join(',')}|${[...dependents[i]!].sort().join(',')}`;
      const members = classes.get(key);
      if (members) members.push(i);
      else classes.set(key, [i]);
    });
    nodes = [];
    for (const members of classes.values()) {
      // Grouping a single leftover task would only hide it.
      const shown = members.length > limits.showEach + 1 ? members.slice(0, limits.showEach) : members;
      for (const i of shown) nodes.push({ id: tasks[i]!.id, kind: 'task', members: [i], dependsOn: [] });
      const rest = members.slice(shown.length);
      if (rest.length > 0) nodes.push(group(tasks, rest));
    }
    if (nodes.length > limits.maxNodes) {
      const kept = nodes.slice(0, limits.maxNodes - 1);
      const rest = nodes.slice(limits.maxNodes - 1).flatMap((n) => n.members);
      nodes = [...kept, group(tasks, rest)];
    }
    for (const n of nodes) if (n.kind === 'group') for (const i of n.members) nodeOfTask[i] = n.id;
  }
  for (const n of nodes) {
    const deps = new Set<string>();
    for (const i of n.members) {
      for (const d of tasks[i]!.dependsOn) {
        const j = index.get(d);
        const node = j === undefined ? undefined : nodeOfTask[j];
        if (node !== undefined && node !== n.id) deps.add(node);
      }
    }
    n.dependsOn = [...deps];
  }
  return { nodes, nodeOfTask, positions: positionsOf(nodes) };
}

function group(tasks: readonly { id: string }[], members: number[]): PlannedNode {
  return { id: `group:${tasks[members[0]!]!.id}`, kind: 'group', members, dependsOn: [] };
}

export function sizeOf(node: PlannedNode): { width: number; height: number } {
  return { width: NODE_WIDTH, height: node.kind === 'group' ? GROUP_HEIGHT : NODE_HEIGHT };
}

/**
 * The console's layered layout when there are edges. A DAG with none (a bare fan-out)
 * would come out as one tall column, so it is laid out as a grid instead.
 */
function positionsOf(nodes: PlannedNode[]): Map<string, { x: number; y: number }> {
  if (nodes.some((n) => n.dependsOn.length > 0)) {
    const byId = new Map(nodes.map((n) => [n.id, n]));
    return layeredPositions(nodes, (id) => sizeOf(byId.get(id)!));
  }
  const columns = Math.max(1, Math.ceil(Math.sqrt(nodes.length * 1.6)));
  const gap = 24;
  const out = new Map<string, { x: number; y: number }>();
  let y = 0;
  for (let row = 0; row * columns < nodes.length; row++) {
    const cells = nodes.slice(row * columns, (row + 1) * columns);
    cells.forEach((n, c) => out.set(n.id, { x: c * (NODE_WIDTH + gap), y }));
    y += Math.max(...cells.map((n) => sizeOf(n).height)) + gap;
  }
  return out;
}
