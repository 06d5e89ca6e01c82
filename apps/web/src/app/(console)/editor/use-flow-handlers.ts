'use client';

import type { Connection, EdgeChange, NodeChange } from '@xyflow/react';
import { useCallback } from 'react';
import type { TaskNode } from '@/components/task-node';
import { removeEdges, removeTasks } from './draft';
import { connectTasks, dropPositions, summarizeEdgeChanges, summarizeNodeChanges } from './flow-changes';
import type { EditorHistory } from './use-history';
import type { Selection } from './use-selection';

/** React Flow's change handlers, turning the author's moves, deletions, selections and new edges into draft edits. */
export function useFlowHandlers(history: EditorHistory, selection: Selection, onDimensions: (changes: NodeChange[]) => void) {
  const { spec, positions, apply, setSpec } = history;
  const { task: selectedTask, nodes: selectedNodes, edges: selectedEdges, setTask, setNodes, setEdges } = selection;

  const onNodesChange = useCallback(
    (changes: NodeChange<TaskNode>[]) => {
      onDimensions(changes as NodeChange[]);
      const { positions: moved, removed, selection: picked, ...how } = summarizeNodeChanges(changes, positions, selectedNodes);
      if (removed.size > 0) {
        apply({ spec: removeTasks(spec, removed), positions: dropPositions(moved, removed) });
        for (const id of removed) picked.delete(id);
        if (selectedTask && removed.has(selectedTask)) setTask(null);
      } else if (how.moved || how.dragEnded) {
        // A drag is one undo step: positions move live, and the step is recorded when it ends.
        apply({ spec, positions: moved }, how.dragEnded);
      }
      setNodes(picked);
      const only = [...picked];
      if (only.length === 1) setTask(only[0]!);
    },
    [positions, selectedNodes, spec, apply, selectedTask, onDimensions, setTask, setNodes],
  );

  const onEdgesChange = useCallback(
    (changes: EdgeChange[]) => {
      const { removed, selection: picked } = summarizeEdgeChanges(changes, selectedEdges);
      if (removed.length > 0) setSpec(removeEdges(spec, removed));
      setEdges(picked);
    },
    [selectedEdges, spec, setSpec, setEdges],
  );

  const onConnect = useCallback(
    (c: Connection) => {
      if (c.source && c.target) setSpec(connectTasks(spec, c));
    },
    [spec, setSpec],
  );

  return { onNodesChange, onEdgesChange, onConnect };
}
