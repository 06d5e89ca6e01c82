import { planGraph } from '@/lib/task-groups';

/**
 * The rows of the DAG page's grid of runs by task, grouped the way its graph groups them
 * (planGraph): a task the graph draws on its own is a row, and a group node is a row of its
 * own that opens onto its members' rows. Tasks the current version no longer has come last.
 */
export type GridRow =
  | { kind: 'task'; key: string; task: number; id: string; inGroup: string | null; current: boolean }
  | { kind: 'group'; key: string; members: number[]; first: string; last: string };

export function gridRows(tasks: readonly { id: string; dependsOn: readonly string[]; current: boolean }[], open: ReadonlySet<string>): GridRow[] {
  const current = tasks.filter((t) => t.current);
  const plan = planGraph(current);
  const rows: GridRow[] = [];
  for (const node of plan.nodes) {
    if (node.kind === 'task') {
      const i = node.members[0]!;
      rows.push({ kind: 'task', key: tasks[i]!.id, task: i, id: tasks[i]!.id, inGroup: null, current: true });
      continue;
    }
    const first = tasks[node.members[0]!]!.id;
    const last = tasks[node.members[node.members.length - 1]!]!.id;
    rows.push({ kind: 'group', key: node.id, members: node.members, first, last });
    if (open.has(node.id)) for (const i of node.members) rows.push({ kind: 'task', key: tasks[i]!.id, task: i, id: tasks[i]!.id, inGroup: node.id, current: true });
  }
  // The current tasks come first in the grid's task list, so the rest keep their own indices.
  for (let i = current.length; i < tasks.length; i++) rows.push({ kind: 'task', key: `removed:${tasks[i]!.id}`, task: i, id: tasks[i]!.id, inGroup: null, current: false });
  return rows;
}

/**
 * The order in which a group's cell shows one state for its members: the state most worth
 * a look first (a failure, then work in progress), so a group with one failed member among
 * a hundred that succeeded reads as failed.
 */
const GROUP_ORDER = ['failed', 'upstream_failed', 'leased', 'ready', 'waiting', 'cancelled', 'skipped', 'succeeded'] as const;

/** A group's cell: the state it shows and its members per state, in words, for its accessible name. */
export function groupCell(states: readonly (string | null)[], members: readonly number[]): { state: string; counts: string } {
  const byState = new Map<string, number>();
  for (const i of members) {
    const s = states[i] ?? 'none';
    byState.set(s, (byState.get(s) ?? 0) + 1);
  }
  const state = GROUP_ORDER.find((s) => byState.has(s)) ?? 'none';
  const counts = [...byState]
    .sort((a, b) => b[1] - a[1])
    .map(([s, n]) => `${n} ${s === 'none' ? 'no job' : stateWord(s)}`)
    .join(', ');
  return { state, counts };
}

/** A job state as a person reads it ('running' for a leased job). */
export function stateWord(state: string): string {
  return state === 'leased' ? 'running' : state.replace('_', ' ');
}

/**
 * The mark each state carries besides its colour, so the grid reads without colour too:
 * a tick, a cross, an arrow up for an upstream failure, a play sign while running.
 */
export const STATE_MARK: Record<string, string> = {
  succeeded: '✓',
  failed: '✕',
  upstream_failed: '↑',
  leased: '▸',
  ready: '○',
  waiting: '·',
  cancelled: '–',
  skipped: '»',
  none: '',
};
