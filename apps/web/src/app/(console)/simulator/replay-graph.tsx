'use client';

import { useMeasured } from '@/components/measured';
import { dependencyEdges, ReadOnlyFlow } from '@/components/read-only-flow';
import { TaskNodeView, type TaskNode } from '@/components/task-node';
import { GroupNodeView, type GroupNode } from './replay-group-node';
import { type SimReplay } from './replay-model';
import { SHOWN_STATES, stateOf, type ShownState } from '@/lib/shown-states';
import type { DrawingPlan } from '@/lib/graph-plan';
import { type Moment } from './replay-timeline';
import { summaryState } from '@/lib/shown-states';

const nodeTypes = { task: TaskNodeView, taskGroup: GroupNodeView };

/**
 * The replayed DAG at one moment: the console's task nodes (as on the DAG and run pages)
 * coloured by each job's state, and group nodes for crowds of siblings. Positions come
 * from the plan, so moving through time recolours nodes without moving them.
 */
export function ReplayGraph({ replay, plan, moment, height = 340 }: { replay: SimReplay; plan: DrawingPlan; moment: Moment; height?: number }) {
  const [dims, onNodesChange] = useMeasured();
  const stateOfNode = new Map<string, ShownState | 'mixed'>();
  const nodes: (TaskNode | GroupNode)[] = plan.nodes.map((n) => {
    const position = plan.positions.get(n.id) ?? { x: 0, y: 0 };
    const common = { id: n.id, position, draggable: false, connectable: false, measured: dims[n.id] };
    if (n.kind === 'group') {
      const counts = SHOWN_STATES.map(() => 0);
      for (const i of n.members) counts[moment.states[i]!]!++;
      const state = summaryState(counts);
      stateOfNode.set(n.id, state);
      const first = replay.tasks[n.members[0]!]!.id;
      const last = replay.tasks[n.members[n.members.length - 1]!]!.id;
      return { ...common, type: 'taskGroup', data: { first, last, counts, state } } satisfies GroupNode;
    }
    const i = n.members[0]!;
    const task = replay.tasks[i]!;
    const state = stateOf(moment.states[i]!);
    stateOfNode.set(n.id, state);
    const t = moment.latest[i]! >= 0 ? replay.transitions[moment.latest[i]!] : undefined;
    // The holder while leased, and the attempt once there has been more than one.
    const detail = t ? [state === 'leased' ? t.workerId : null, t.attempt > 1 ? `try ${t.attempt}` : null].filter(Boolean).join(' ') : '';
    return { ...common, type: 'task', data: { taskId: task.id, type: task.type, state: state === 'none' ? undefined : state, detail: detail || undefined } } satisfies TaskNode;
  });
  const edges = dependencyEdges(plan.nodes, (id) => stateOfNode.get(id));
  return <ReadOnlyFlow nodes={nodes} edges={edges} nodeTypes={nodeTypes} onNodesChange={onNodesChange} height={height} testId="replay-graph" />;
}
