'use client';

import { useCallback, useState } from 'react';

/** What the author has selected: the task shown in the side panel, and the nodes and edges picked on the canvas. */
export interface Selection {
  task: string | null;
  nodes: Set<string>;
  edges: Set<string>;
  setTask(id: string | null): void;
  setNodes(ids: Set<string>): void;
  setEdges(ids: Set<string>): void;
  /** Selects one task alone, on the canvas and in the side panel. */
  only(id: string): void;
}

export function useSelection(): Selection {
  const [task, setTask] = useState<string | null>(null);
  const [nodes, setNodes] = useState<Set<string>>(new Set());
  const [edges, setEdges] = useState<Set<string>>(new Set());
  const only = useCallback((id: string) => {
    setTask(id);
    setNodes(new Set([id]));
  }, []);
  return { task, nodes, edges, setTask, setNodes, setEdges, only };
}
