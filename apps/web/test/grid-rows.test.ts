import { describe, expect, it } from 'vitest';
import { gridRows, groupCell, STATE_MARK } from '../src/lib/grid-rows';
import { GRAPH_LIMITS, planGraph } from '../src/lib/task-groups';

const fanOut = (children: number) => [
  { id: 'root', dependsOn: [] as string[], current: true },
  ...Array.from({ length: children }, (_, i) => ({ id: `child-${String(i).padStart(3, '0')}`, dependsOn: ['root'], current: true })),
];

describe('the grid of runs by task: its rows', () => {
  it('groups a wide fan-out as the graph does, and opens a group onto its members', () => {
    const tasks = fanOut(30);
    const plan = planGraph(tasks);
    const closed = gridRows(tasks, new Set());
    expect(closed.map((r) => r.key)).toEqual(plan.nodes.map((n) => n.id));
    const group = closed.at(-1)!;
    expect(group).toMatchObject({ kind: 'group', first: 'child-006', last: 'child-029' });
    expect(group.kind === 'group' && group.members).toHaveLength(30 - GRAPH_LIMITS.showEach);
    const opened = gridRows(tasks, new Set([group.key]));
    expect(opened).toHaveLength(closed.length + 30 - GRAPH_LIMITS.showEach);
    expect(opened.slice(closed.length).every((r) => r.kind === 'task' && r.inGroup === group.key)).toBe(true);
  });

  it('puts tasks the current version dropped after the others, each on its own row', () => {
    const rows = gridRows([...fanOut(2), { id: 'gone', dependsOn: [], current: false }], new Set());
    expect(rows.map((r) => (r.kind === 'task' ? [r.id, r.current] : null))).toEqual([
      ['root', true],
      ['child-000', true],
      ['child-001', true],
      ['gone', false],
    ]);
  });

  it("shows a group's cell as its most pressing state, with its members counted in words", () => {
    const states = ['succeeded', 'succeeded', 'failed', null, 'leased'];
    expect(groupCell(states, [0, 1, 2, 3])).toEqual({ state: 'failed', counts: '2 succeeded, 1 failed, 1 no job' });
    expect(groupCell(states, [0, 4])).toEqual({ state: 'leased', counts: '1 succeeded, 1 running' });
    expect(groupCell(states, [3])).toEqual({ state: 'none', counts: '1 no job' });
    // Every state a job can be in has a mark besides its colour.
    for (const s of ['succeeded', 'failed', 'upstream_failed', 'leased', 'ready', 'waiting', 'cancelled', 'skipped']) expect(STATE_MARK[s]).toMatch(/./);
  });
});
