'use client';

import { useReactFlow } from '@xyflow/react';
import { useCallback, useEffect, useRef } from 'react';
import { useMeasured } from '@/components/measured';
import { autoLayout, freshTaskId, type DraftSpec, type DraftTask } from './draft';
import { useFlowHandlers } from './use-flow-handlers';
import type { EditorHistory } from './use-history';
import type { Selection } from './use-selection';

export type AddTask = (type: string, config: Record<string, unknown>, at?: { x: number; y: number }) => void;

/** Where a task added without a drop point goes: a grid of four columns, in the order added. */
function gridSpot(count: number): { x: number; y: number } {
  return { x: 40 + (count % 4) * 240, y: 60 + Math.floor(count / 4) * 120 };
}

/** A new task may land outside the view: refit once it has been measured, so it is in reach. */
function useRefitOnAdd(taskCount: number): void {
  const flow = useReactFlow();
  const lastCount = useRef(taskCount);
  useEffect(() => {
    if (taskCount > lastCount.current) {
      const timer = setTimeout(() => void flow.fitView({ padding: 0.25, maxZoom: 1, duration: 0 }), 60);
      lastCount.current = taskCount;
      return () => clearTimeout(timer);
    }
    lastCount.current = taskCount;
  }, [taskCount, flow]);
}

/** The canvas's side of the editor: adding tasks, laying them out, and React Flow's change handlers. */
export function useCanvas(history: EditorHistory, selection: Selection) {
  const flow = useReactFlow();
  const [dims, onDimensions] = useMeasured();
  const { spec, positions, apply } = history;
  const { only } = selection;
  const handlers = useFlowHandlers(history, selection, onDimensions);
  useRefitOnAdd(spec.tasks.length);

  const addTask: AddTask = useCallback(
    (type, config, at) => {
      const id = freshTaskId(spec, type === 'custom' ? 'task' : type);
      const task: DraftTask = { id, type: type === 'custom' ? 'my-handler' : type, config: structuredClone(config), dependsOn: [] };
      apply({ spec: { ...spec, tasks: [...spec.tasks, task] }, positions: { ...positions, [id]: at ?? gridSpot(spec.tasks.length) } });
      only(id);
    },
    [spec, positions, apply, only],
  );

  /** Replaces the draft with `next` laid out afresh (an import, or auto-layout of the draft itself). */
  const layoutSpec = useCallback(
    (next: DraftSpec) => {
      apply({ spec: next, positions: autoLayout(next) });
      requestAnimationFrame(() => void flow.fitView({ padding: 0.2 }));
    },
    [apply, flow],
  );
  const layout = useCallback(() => layoutSpec(spec), [layoutSpec, spec]);

  return { dims, addTask, layout, layoutSpec, ...handlers };
}
