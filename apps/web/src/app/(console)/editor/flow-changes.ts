import type { Connection, EdgeChange, NodeChange } from '@xyflow/react';
import type { TaskNode } from '@/components/task-node';
import type { DraftSpec, Positions } from './draft';

/** What a batch of React Flow node changes amounts to for the draft. */
export interface NodeChangeSummary {
  positions: Positions;
  moved: boolean;
  dragEnded: boolean;
  removed: Set<string>;
  selection: Set<string>;
}

export function summarizeNodeChanges(changes: NodeChange<TaskNode>[], positions: Positions, selected: Set<string>): NodeChangeSummary {
  const out: NodeChangeSummary = { positions, moved: false, dragEnded: false, removed: new Set(), selection: new Set(selected) };
  for (const change of changes) {
    if (change.type === 'position') {
      if (change.position) {
        out.positions = { ...out.positions, [change.id]: change.position };
        out.moved = true;
      }
      if (change.dragging === false) out.dragEnded = true;
    } else if (change.type === 'remove') {
      out.removed.add(change.id);
    } else if (change.type === 'select') {
      if (change.selected) out.selection.add(change.id);
      else out.selection.delete(change.id);
    }
  }
  return out;
}

/** What a batch of React Flow edge changes amounts to: the dependencies removed and the edges now selected. */
export function summarizeEdgeChanges(changes: EdgeChange[], selected: Set<string>): { removed: { source: string; target: string }[]; selection: Set<string> } {
  const selection = new Set(selected);
  const removed: { source: string; target: string }[] = [];
  for (const change of changes) {
    if (change.type === 'select') {
      if (change.selected) selection.add(change.id);
      else selection.delete(change.id);
    } else if (change.type === 'remove') {
      const [source, target] = change.id.split('->');
      if (source && target) removed.push({ source, target });
      selection.delete(change.id);
    }
  }
  return { removed, selection };
}

/** An edge from A to B means B depends on A: work flows along the arrow. */
export function connectTasks(spec: DraftSpec, c: Connection): DraftSpec {
  return {
    ...spec,
    tasks: spec.tasks.map((t) => (t.id === c.target && !t.dependsOn.includes(c.source) ? { ...t, dependsOn: [...t.dependsOn, c.source] } : t)),
  };
}

/** Positions without the tasks removed. */
export function dropPositions(positions: Positions, removed: Set<string>): Positions {
  return Object.fromEntries(Object.entries(positions).filter(([id]) => !removed.has(id)));
}
