'use client';

import { Background, Controls, MarkerType, ReactFlow, type Edge } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import { useMemo } from 'react';
import { layeredPositions } from './layout';
import { useMeasured } from './measured';
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
  const edges: Edge[] = tasks.flatMap((t) =>
    t.dependsOn.map((dep) => ({
      id: `${dep}->${t.id}`,
      source: dep,
      target: t.id,
      markerEnd: { type: MarkerType.ArrowClosed },
      animated: states?.[t.id] === 'leased',
      className: states?.[dep] === 'succeeded' ? 'edge-done' : '',
    })),
  );
  // Very large DAGs are drawn without the per-frame niceties; the positions still come from the layout.
  const large = tasks.length > 500;
  return (
    <div className="graph" style={{ height }} data-testid="dag-graph">
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        colorMode="system"
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        minZoom={0.05}
        nodesConnectable={false}
        nodesDraggable={false}
        onlyRenderVisibleElements={large}
        onNodeClick={(_, node) => onSelect?.(node.id)}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
