'use client';

import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { SHOWN_STATES, type ShownState } from '@/lib/shown-states';

export interface TaskGroupData extends Record<string, unknown> {
  first: string;
  last: string;
  /** Members per state, in SHOWN_STATES order. */
  counts: number[];
  state: ShownState | 'mixed';
}

export type TaskGroupNode = Node<TaskGroupData, 'taskGroup'>;

/**
 * Siblings of a wide fan-out drawn as one node on the DAG and run pages: how many there are,
 * the first and last of them, and a bar split by their jobs' states with the count in each.
 * Members with no job in the run shown (or no run at all) are left out of the bar and the
 * counts; the title already says how many there are.
 */
export function TaskGroupNodeView({ data }: NodeProps<TaskGroupNode>) {
  const total = data.counts.reduce((a, b) => a + b, 0);
  const shown = SHOWN_STATES.flatMap((s, i) => (s !== 'none' && (data.counts[i] ?? 0) > 0 ? [{ state: s, n: data.counts[i]! }] : []));
  const attributes = Object.fromEntries(SHOWN_STATES.map((s, i) => [`data-count-${s}`, data.counts[i] ?? 0]));
  return (
    <div className={`task-node group-node state-${data.state}`} data-testid="task-group-node" data-state={data.state} data-total={total} {...attributes}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      <div className="task-node-title">+{total.toLocaleString('en-US')} more tasks</div>
      <div className="task-node-meta" title={`${data.first} … ${data.last}`} style={{ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', display: 'block' }}>
        <span className="task-type">
          {data.first} … {data.last}
        </span>
      </div>
      {shown.length > 0 ? (
        <>
          <div className="group-bar" aria-hidden>
            {shown.map(({ state, n }) => (
              <span key={state} className={`group-seg state-${state}`} style={{ width: `${(n / Math.max(total, 1)) * 100}%` }} />
            ))}
          </div>
          <div className="group-counts">
            {shown.map(({ state, n }) => (
              <span key={state}>
                <i className={`dot state-${state}`} /> {n.toLocaleString('en-US')} {state.replace('_', ' ')}
              </span>
            ))}
          </div>
        </>
      ) : null}
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}
