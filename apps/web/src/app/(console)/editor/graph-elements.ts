import { MarkerType, type Edge } from '@xyflow/react';
import type { Dimensions } from '@/components/measured';
import type { TaskNode } from '@/components/task-node';
import type { DraftSpec, Positions } from './draft';

/** The tasks as React Flow nodes, rebuilt from the draft on every render (the flow is controlled). */
export function taskNodes(spec: DraftSpec, positions: Positions, selected: Set<string>, dims: Dimensions, problemTasks: Set<string>): TaskNode[] {
  return spec.tasks.map((t) => ({
    id: t.id,
    type: 'task',
    position: positions[t.id] ?? { x: 0, y: 0 },
    selected: selected.has(t.id),
    measured: dims[t.id],
    data: { taskId: t.id, type: t.type, problem: problemTasks.has(t.id), editable: true },
  }));
}

/**
 * One edge per dependency on a task that exists, marked when it closes a cycle. An edge
 * into a task with a trigger rule other than all_success is dashed and labelled with the
 * rule, since the task may run whatever that dependency's outcome.
 */
export function dependencyEdges(spec: DraftSpec, selected: Set<string>, cycleEdges: Set<string>): Edge[] {
  const known = new Set(spec.tasks.map((t) => t.id));
  return spec.tasks.flatMap((t) =>
    t.dependsOn
      .filter((d) => known.has(d))
      .map((dep) => {
        const id = `${dep}->${t.id}`;
        const rule = typeof t.trigger === 'string' && t.trigger !== 'all_success' ? t.trigger : null;
        return {
          id,
          source: dep,
          target: t.id,
          selected: selected.has(id),
          markerEnd: { type: MarkerType.ArrowClosed },
          className: [cycleEdges.has(id) ? 'edge-problem' : '', rule ? 'edge-rule' : ''].filter(Boolean).join(' '),
          ...(rule ? { label: rule.replace('_', ' '), style: { strokeDasharray: '6 4' } } : {}),
          data: { problem: cycleEdges.has(id), rule },
        };
      }),
  );
}
