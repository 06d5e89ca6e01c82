import { SHOWN_STATES, type ShownState } from '@/lib/shown-states';
import { planDrawing, type DrawingPlan, type PlanLimits } from '@/lib/graph-plan';
import { summaryState } from '@/lib/shown-states';

/**
 * The DAG and run pages group a wide fan-out the way the simulator's replay does (the plan
 * and the state order are the replay's), with limits of their own. Their graph is 300 to
 * 360 px tall, and a column of siblings stays readable at the zoom that fits it only up to
 * about seven nodes: six tasks and a group. Past a dozen tasks, any set of more than seven
 * siblings is grouped; the node cap keeps a page that polls every second from redrawing
 * thousands of nodes.
 */
export const GRAPH_LIMITS: PlanLimits = { drawAllUpTo: 12, showEach: 6, maxNodes: 120 };

export function planGraph(tasks: readonly { id: string; dependsOn: readonly string[] }[]): DrawingPlan {
  return planDrawing(tasks, GRAPH_LIMITS);
}

/** A group node's members in aggregate: the first and last of them, and how many are in each state. */
export interface GroupSummary {
  first: string;
  last: string;
  /** Members per state, in SHOWN_STATES order; 'none' counts members with no job in the run shown (or no run). */
  counts: number[];
  /** The state every member shares, or 'mixed'. */
  state: ShownState | 'mixed';
}

export function summarizeGroup(tasks: readonly { id: string }[], members: readonly number[], states?: Readonly<Record<string, string>>): GroupSummary {
  const counts = SHOWN_STATES.map(() => 0);
  for (const i of members) {
    const at = SHOWN_STATES.indexOf((states?.[tasks[i]!.id] ?? 'none') as ShownState);
    counts[at < 0 ? 0 : at]!++;
  }
  return { first: tasks[members[0]!]!.id, last: tasks[members[members.length - 1]!]!.id, counts, state: summaryState(counts) };
}
