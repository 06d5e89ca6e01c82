'use client';

import type { NodeChange } from '@xyflow/react';
import { useCallback, useState } from 'react';

export type Dimensions = Record<string, { width: number; height: number }>;

/**
 * React Flow 12 keeps a node hidden until the node object carries its measured size, and in
 * a controlled flow the app must store that size from the 'dimensions' changes it reports.
 * The console builds its nodes from the spec on every render, so it keeps the sizes here.
 */
export function useMeasured(): [Dimensions, (changes: NodeChange[]) => void] {
  const [dims, setDims] = useState<Dimensions>({});
  const onChanges = useCallback((changes: NodeChange[]) => {
    const sized = changes.filter((c): c is Extract<NodeChange, { type: 'dimensions' }> => c.type === 'dimensions' && !!c.dimensions);
    if (sized.length === 0) return;
    setDims((previous) => {
      const next = { ...previous };
      for (const c of sized) next[c.id] = { width: c.dimensions!.width, height: c.dimensions!.height };
      return next;
    });
  }, []);
  return [dims, onChanges];
}
