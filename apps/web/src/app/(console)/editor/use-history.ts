'use client';

import { useCallback, useReducer } from 'react';
import { completePositions, emptySpec, historyReducer, type DraftSpec, type History, type Positions, type Snapshot } from './draft';

/** The draft with its undo and redo: every change to the spec or the drawing goes through here. */
export interface EditorHistory {
  spec: DraftSpec;
  positions: Positions;
  canUndo: boolean;
  canRedo: boolean;
  /** Makes `next` the present; `record` false changes it without an undo step (a drag in progress). */
  apply(next: Snapshot, record?: boolean): void;
  /** Changes the spec, keeping every task's place and laying out tasks that have none yet. */
  setSpec(next: DraftSpec, record?: boolean): void;
  undo(): void;
  redo(): void;
  /** Starts over from `present` with no undo, as when a stored DAG is loaded. */
  reset(present: Snapshot): void;
}

function blankHistory(): History {
  return { past: [], present: { spec: emptySpec(), positions: {} }, future: [] };
}

export function useHistory(): EditorHistory {
  const [history, dispatch] = useReducer(historyReducer, undefined, blankHistory);
  const { spec, positions } = history.present;
  const apply = useCallback((next: Snapshot, record = true) => dispatch({ kind: 'apply', next, record }), []);
  const setSpec = useCallback((next: DraftSpec, record = true) => apply({ spec: next, positions: completePositions(next, positions) }, record), [apply, positions]);
  const undo = useCallback(() => dispatch({ kind: 'undo' }), []);
  const redo = useCallback(() => dispatch({ kind: 'redo' }), []);
  const reset = useCallback((present: Snapshot) => dispatch({ kind: 'reset', present }), []);
  return { spec, positions, canUndo: history.past.length > 0, canRedo: history.future.length > 0, apply, setSpec, undo, redo, reset };
}
