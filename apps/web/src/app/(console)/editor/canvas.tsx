'use client';

import { Background, Controls, MiniMap, ReactFlow, useReactFlow, type Connection, type EdgeChange, type NodeChange } from '@xyflow/react';
import '@xyflow/react/dist/style.css';
import type { DragEvent } from 'react';
import { useColorMode } from '@/components/color-mode';
import type { Dimensions } from '@/components/measured';
import { nodeTypes, type TaskNode } from '@/components/task-node';
import { PALETTE } from './draft';
import { dependencyEdges, taskNodes } from './graph-elements';
import { PALETTE_DRAG_TYPE } from './palette';
import type { AddTask } from './use-canvas';
import type { EditorHistory } from './use-history';
import type { Selection } from './use-selection';

export interface CanvasProps {
  history: EditorHistory;
  selection: Selection;
  dims: Dimensions;
  /** Tasks and edges (`a->b`) an issue is about, drawn as problems. */
  problems: { tasks: Set<string>; edges: Set<string> };
  addTask: AddTask;
  onNodesChange(changes: NodeChange<TaskNode>[]): void;
  onEdgesChange(changes: EdgeChange[]): void;
  onConnect(c: Connection): void;
}

/** A palette item dropped on the canvas becomes a task where it was dropped. */
function useDropTarget(addTask: AddTask) {
  const flow = useReactFlow();
  const onDragOver = (e: DragEvent) => {
    if (e.dataTransfer.types.includes(PALETTE_DRAG_TYPE)) e.preventDefault();
  };
  const onDrop = (e: DragEvent) => {
    const item = PALETTE.find((p) => p.type === e.dataTransfer.getData(PALETTE_DRAG_TYPE));
    if (!item) return;
    e.preventDefault();
    addTask(item.type, item.config, flow.screenToFlowPosition({ x: e.clientX, y: e.clientY }));
  };
  return { onDragOver, onDrop };
}

/** The draft drawn as a graph the author edits directly: tasks to move, connect, select and delete. */
export function Canvas({ history, selection, dims, problems, addTask, onNodesChange, onEdgesChange, onConnect }: CanvasProps) {
  const colorMode = useColorMode();
  const drop = useDropTarget(addTask);
  const { spec, positions } = history;
  return (
    <div className="canvas" data-testid="editor-canvas" onDragOver={drop.onDragOver} onDrop={drop.onDrop}>
      <ReactFlow
        nodes={taskNodes(spec, positions, selection.nodes, dims, problems.tasks)}
        edges={dependencyEdges(spec, selection.edges, problems.edges)}
        nodeTypes={nodeTypes}
        onNodesChange={onNodesChange}
        onEdgesChange={onEdgesChange}
        onConnect={onConnect}
        onNodeClick={(_, node) => selection.setTask(node.id)}
        onPaneClick={() => selection.setTask(null)}
        deleteKeyCode={['Delete', 'Backspace']}
        colorMode={colorMode}
        fitView
        fitViewOptions={{ maxZoom: 1 }}
        proOptions={{ hideAttribution: true }}
      >
        <Background gap={20} size={1} />
        <Controls />
        <MiniMap pannable zoomable />
      </ReactFlow>
      {spec.tasks.length === 0 ? <div className="canvas-hint">Pick a job type on the left to add the first task.</div> : null}
    </div>
  );
}
