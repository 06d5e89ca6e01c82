import { Graph, layout } from '@dagrejs/dagre';

export const NODE_WIDTH = 180;
export const NODE_HEIGHT = 58;

/**
 * Layered left-to-right positions from dagre. Unlike a topological layering it also accepts
 * a graph with a cycle, which the editor must still draw so the author can see and break it.
 */
export function layeredPositions(
  tasks: readonly { id: string; dependsOn: readonly string[] }[],
  sizeOf: (id: string) => { width: number; height: number } = () => ({ width: NODE_WIDTH, height: NODE_HEIGHT }),
): Map<string, { x: number; y: number }> {
  const g = new Graph();
  g.setGraph({ rankdir: 'LR', nodesep: 24, ranksep: 70, marginx: 10, marginy: 10 });
  g.setDefaultEdgeLabel(() => ({}));
  const ids = new Set(tasks.map((t) => t.id));
  for (const t of tasks) g.setNode(t.id, sizeOf(t.id));
  for (const t of tasks) for (const dep of t.dependsOn) if (ids.has(dep) && dep !== t.id) g.setEdge(dep, t.id);
  layout(g);
  const out = new Map<string, { x: number; y: number }>();
  for (const t of tasks) {
    const n = g.node(t.id) as { x: number; y: number } | undefined;
    const size = sizeOf(t.id);
    // dagre gives centres; React Flow places nodes by their top-left corner.
    out.set(t.id, n ? { x: n.x - size.width / 2, y: n.y - size.height / 2 } : { x: 0, y: 0 });
  }
  return out;
}
