'use client';

import { useMemo } from 'react';
import { layeredPositions } from './layout';
import { useMeasured } from './measured';
import { dependencyEdges, ReadOnlyFlow } from './read-only-flow';
import { nodeTypes, type TaskNode } from './task-node';

/**
 * A read-only DAG drawing: tasks laid out in layers left to right, each coloured by its
 * job's state in the selected run. Positions depend only on the spec, so a live update of
 * the states recolours the nodes without moving them.
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
  onSelect?: (taskId: string) => void;
  height?: number;
}) {
  const positions = useMemo(() => layeredPositions(tasks), [tasks]);
  const [dims, onNodesChange] = useMeasured();
  const nodes: TaskNode[] = tasks.map((t) => ({
    id: t.id,
    type: 'task',
    position: positions.get(t.id) ?? { x: 0, y: 0 },
    data: { taskId: t.id, type: t.type, state: states?.[t.id], detail: details?.[t.id] },
    draggable: false,
    connectable: false,
    measured: dims[t.id],
  }));
  const edges = dependencyEdges(tasks, (id) => states?.[id]);
  return <ReadOnlyFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} onNodesChange={onNodesChange} onSelect={onSelect} large={tasks.length > 500} height={height} testId="dag-graph" />;
}
