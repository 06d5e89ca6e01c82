'use client';

import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';
import { SHOWN_STATES, type ShownState } from '@/lib/shown-states';

export interface GroupNodeData extends Record<string, unknown> {
  /** The first and last member, for the title. */
  first: string;
  last: string;
  /** Members per state, in SHOWN_STATES order. */
  counts: number[];
  /** The state every member shares, or 'mixed'. */
  state: ShownState | 'mixed';
}

export type GroupNode = Node<GroupNodeData, 'taskGroup'>;

const SHORT: Record<ShownState, string> = {
  none: 'not created',
  waiting: 'waiting',
  ready: 'ready',
  leased: 'leased',
  succeeded: 'done',
  failed: 'failed',
  upstream_failed: 'upstream failed',
  cancelled: 'cancelled',
  skipped: 'skipped',
};

/**
 * Many interchangeable tasks drawn as one node: a bar split by state and the count in each,
 * so a 10,000-job fan-out costs one node to recolour, not 10,000.
 */
export function GroupNodeView({ data }: NodeProps<GroupNode>) {
  const total = data.counts.reduce((a, b) => a + b, 0);
  const counts = Object.fromEntries(SHOWN_STATES.map((s, i) => [`data-count-${s}`, data.counts[i] ?? 0]));
  return (
    <div className={`task-node group-node state-${data.state}`} data-testid="replay-group-node" data-state={data.state} data-total={total} {...counts}>
      <Handle type="target" position={Position.Left} isConnectable={false} />
      {/* The count and the range on lines of their own: on one line the range was cut off mid-name. */}
      <div className="task-node-title">+{total.toLocaleString('en-US')} more</div>
      <div className="task-node-meta" title={`${data.first} … ${data.last}`} style={{ overflow: 'hidden', textOverflow: 'ellipsis', whiteSpace: 'nowrap', display: 'block' }}>
        <span className="task-type">
          {data.first} … {data.last}
        </span>
      </div>
      <div className="group-bar" aria-hidden>
        {data.counts.map((n, i) => (n > 0 ? <span key={i} className={`group-seg state-${SHOWN_STATES[i]}`} style={{ width: `${(n / Math.max(total, 1)) * 100}%` }} /> : null))}
      </div>
      <div className="group-counts">
        {data.counts.map((n, i) =>
          n > 0 ? (
            <span key={i}>
              <i className={`dot state-${SHOWN_STATES[i]}`} /> {n.toLocaleString('en-US')} {SHORT[SHOWN_STATES[i]!]}
            </span>
          ) : null,
        )}
      </div>
      <Handle type="source" position={Position.Right} isConnectable={false} />
    </div>
  );
}
