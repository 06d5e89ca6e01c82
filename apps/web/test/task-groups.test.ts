import { describe, expect, it } from 'vitest';
import { GRAPH_LIMITS, planGraph, summarizeGroup } from '../src/lib/task-groups';

const fanOut = (children: number) => [
  { id: 'root', dependsOn: [] as string[] },
  ...Array.from({ length: children }, (_, i) => ({ id: `child-${String(i).padStart(3, '0')}`, dependsOn: ['root'] })),
];

describe('DAG page graph grouping', () => {
  it('draws a root and 200 children as the root, the first few children and one group of the rest', () => {
    const tasks = fanOut(200);
    const plan = planGraph(tasks);
    expect(plan.nodes.map((n) => n.kind)).toEqual(['task', ...Array<'task'>(GRAPH_LIMITS.showEach).fill('task'), 'group']);
    const group = plan.nodes.at(-1)!;
    expect(group.members).toHaveLength(200 - GRAPH_LIMITS.showEach);
    expect(group.dependsOn).toEqual(['root']);
    expect(plan.nodeOfTask[200]).toBe(group.id);
  });

  it('draws a small DAG task by task, and seven siblings in a larger DAG without a group', () => {
    expect(planGraph(fanOut(4)).nodes.every((n) => n.kind === 'task')).toBe(true);
    const chain = Array.from({ length: 10 }, (_, i) => ({ id: `step-${i}`, dependsOn: i === 0 ? [] : [`step-${i - 1}`] }));
    const tasks = [...fanOut(GRAPH_LIMITS.showEach + 1), ...chain];
    expect(tasks.length).toBeGreaterThan(GRAPH_LIMITS.drawAllUpTo);
    expect(planGraph(tasks).nodes.every((n) => n.kind === 'task')).toBe(true);
  });

  it('counts a group by its jobs states, and calls it mixed when they differ', () => {
    const tasks = fanOut(10);
    const members = [7, 8, 9, 10];
    const states = { 'child-006': 'succeeded', 'child-007': 'succeeded', 'child-008': 'leased', 'child-009': 'failed' };
    const summary = summarizeGroup(tasks, members, states);
    expect(summary.first).toBe('child-006');
    expect(summary.last).toBe('child-009');
    expect(summary.state).toBe('mixed');
    const byState = Object.fromEntries(['none', 'waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'cancelled'].map((s, i) => [s, summary.counts[i]]));
    expect(byState).toEqual({ none: 0, waiting: 0, ready: 0, leased: 1, succeeded: 2, failed: 1, upstream_failed: 0, cancelled: 0 });
  });

  it('counts every member as without a job when no run is shown, and one shared state as that state', () => {
    const tasks = fanOut(10);
    expect(summarizeGroup(tasks, [1, 2, 3]).state).toBe('none');
    expect(summarizeGroup(tasks, [1, 2, 3]).counts[0]).toBe(3);
    const done = Object.fromEntries(tasks.map((t) => [t.id, 'succeeded']));
    expect(summarizeGroup(tasks, [1, 2, 3], done).state).toBe('succeeded');
  });
});
