'use client';

import { Handle, Position, type Node, type NodeProps } from '@xyflow/react';

export interface TaskNodeData extends Record<string, unknown> {
  taskId: string;
  type: string;
  /** The job's state in the selected run, when a run is shown. */
  state?: string;
  /** Caught in a cycle or pointing at an unknown task: drawn red before saving. */
  problem?: boolean;
  detail?: string;
  editable?: boolean;
}

export type TaskNode = Node<TaskNodeData, 'task'>;

export function TaskNodeView({ data, selected }: NodeProps<TaskNode>) {
  const state = data.state ?? 'none';
  return (
    <div
      className={`task-node state-${state} ${data.problem ? 'problem' : ''} ${selected ? 'selected' : ''}`}
      data-testid={`task-node-${data.taskId}`}
      data-state={state}
      data-problem={data.problem ? 'true' : 'false'}
    >
      <Handle type="target" position={Position.Left} isConnectable={data.editable ?? false} data-testid={`handle-in-${data.taskId}`} />
      <div className="task-node-title">{data.taskId}</div>
      <div className="task-node-meta">
        <span className="task-type">{data.type}</span>
        {data.state ? <span className={`dot state-${state}`} /> : null}
        {data.state ? <span className="task-state">{data.state.replace('_', ' ')}</span> : null}
        {data.detail ? <span className="task-detail">{data.detail}</span> : null}
      </div>
      <Handle type="source" position={Position.Right} isConnectable={data.editable ?? false} data-testid={`handle-out-${data.taskId}`} />
    </div>
  );
}

export const nodeTypes = { task: TaskNodeView };
