'use client';

import { useRef } from 'react';

/**
 * Keys for the task panel that follow a task through renames: keyed by the task id, a
 * rename remounted the panel and dropped the focus the author had just clicked.
 */
export interface PanelKeys {
  keyFor(taskId: string): number;
  /** Hands the renamed task's key to its new id, so its panel stays mounted. */
  rename(from: string, to: string): void;
}

export function usePanelKeys(): PanelKeys {
  const keys = useRef(new Map<string, number>());
  const next = useRef(1);
  const keyFor = (taskId: string): number => {
    let key = keys.current.get(taskId);
    if (key === undefined) {
      key = next.current++;
      keys.current.set(taskId, key);
    }
    return key;
  };
  const rename = (from: string, to: string): void => {
    const key = keyFor(from);
    keys.current.delete(from);
    keys.current.set(to, key);
  };
  return { keyFor, rename };
}
