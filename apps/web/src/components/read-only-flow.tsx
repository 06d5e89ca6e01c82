'use client';

import { Background, Controls, MarkerType, ReactFlow, type Edge, type Node, type NodeChange, type NodeTypes } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { KeyboardEvent } from 'react';
import { useColorMode } from './color-mode';

/**
 * The dependency arrows of a drawn DAG: one edge per `dependsOn`, animated while the
 * dependent is leased and marked done once the dependency succeeded. Both the DAG and run
 * pages and the simulator's replay draw their edges this way.
 */
export function dependencyEdges(items: readonly { id: string; dependsOn: readonly string[] }[], stateOf: (id: string) => string | undefined): Edge[] {
  return items.flatMap((item) =>
    item.dependsOn.map((dep) => ({
      id: `${dep}->${item.id}`,
      source: dep,
      target: item.id,
      markerEnd: { type: MarkerType.ArrowClosed },
      animated: stateOf(item.id) === 'leased',
      className: stateOf(dep) === 'succeeded' ? 'edge-done' : '',
    })),
  );
}

/** A React Flow canvas for looking, not editing: nothing drags or connects, and it fits the view. */
export function ReadOnlyFlow<N extends Node>({
  nodes,
  edges,
  nodeTypes,
  onNodesChange,
  onSelect,
  large = false,
  height,
  testId,
}: {
  nodes: N[];
  edges: Edge[];
  nodeTypes: NodeTypes;
  onNodesChange: (changes: NodeChange<N>[]) => void;
  onSelect?: (id: string) => void;
  /** Very large drawings skip the per-frame niceties and render only what is visible. */
  large?: boolean;
  height: number;
  testId: string;
}) {
  const colorMode = useColorMode();
  // React Flow gives each node a Tab stop, but its Enter or Space only selects the node and
  // never calls onNodeClick; a node opened by the keyboard must open as a clicked one does.
  const onKeyDown = onSelect
    ? (e: KeyboardEvent<HTMLDivElement>) => {
        if (e.key !== 'Enter' && e.key !== ' ') return;
        const target = e.target as HTMLElement;
        const id = target.classList.contains('react-flow__node') ? target.getAttribute('data-id') : null;
        if (id === null) return;
        e.preventDefault();
        onSelect(id);
      }
    : undefined;
  return (
    <div className="graph" style={{ height }} data-testid={testId} onKeyDown={onKeyDown}>
      <ReactFlow
        nodes={nodes}
        edges={edges}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        colorMode={colorMode}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        minZoom={0.05}
        nodesConnectable={false}
        nodesDraggable={false}
        onlyRenderVisibleElements={large}
        onNodeClick={onSelect ? (_, node) => onSelect(node.id) : undefined}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} size={1} />
        <Controls showInteractive={false} />
      </ReactFlow>
    </div>
  );
}
