'use client';

import { useMemo } from 'react';
import { planGraph, summarizeGroup } from '@/lib/task-groups';
import { useMeasured } from './measured';
import { dependencyEdges, ReadOnlyFlow } from './read-only-flow';
import { TaskGroupNodeView, type TaskGroupNode } from './task-group-node';
import { TaskNodeView, type TaskNode } from './task-node';

const nodeTypes = { task: TaskNodeView, taskGroup: TaskGroupNodeView };

/**
 * A read-only DAG drawing for the DAG and run pages: tasks laid out in layers left to right,
 * each coloured by its job's state in the selected run, and a wide fan-out drawn as its first
 * few tasks plus one group node with a count per state, so two hundred siblings do not shrink
 * the view to a line. Positions depend only on the spec, so a live update of the states
 * recolours the nodes without moving them.
 */
export function DagGraph({
  tasks,
  states,
  details,
  onSelect,
  height = 360,
}: {
  tasks: readonly { id: string; type: string; dependsOn: readonly string[] }[];
  states?: Record<string, string>;
  details?: Record<string, string>;
  /** Called with a task's id; a group stands for many tasks, so clicking it selects none. */
  onSelect?: (taskId: string) => void;
  height?: number;
}) {
  const plan = useMemo(() => planGraph(tasks), [tasks]);
  const [dims, onNodesChange] = useMeasured();
  const stateOfNode = new Map<string, string | undefined>();
  const nodes: (TaskNode | TaskGroupNode)[] = plan.nodes.map((n) => {
    const common = { id: n.id, position: plan.positions.get(n.id) ?? { x: 0, y: 0 }, draggable: false, connectable: false, measured: dims[n.id] };
    if (n.kind === 'group') {
      const summary = summarizeGroup(tasks, n.members, states);
      stateOfNode.set(n.id, summary.state);
      return { ...common, type: 'taskGroup', data: { ...summary } } satisfies TaskGroupNode;
    }
    const task = tasks[n.members[0]!]!;
    stateOfNode.set(n.id, states?.[task.id]);
    return { ...common, type: 'task', data: { taskId: task.id, type: task.type, state: states?.[task.id], detail: details?.[task.id] } } satisfies TaskNode;
  });
  const edges = dependencyEdges(plan.nodes, (id) => stateOfNode.get(id));
  const taskIds = useMemo(() => new Set(plan.nodes.filter((n) => n.kind === 'task').map((n) => n.id)), [plan]);
  const select = onSelect ? (id: string) => (taskIds.has(id) ? onSelect(id) : undefined) : undefined;
  return <ReadOnlyFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} onNodesChange={onNodesChange} onSelect={select} height={height} testId="dag-graph" />;
}
