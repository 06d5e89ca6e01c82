import { runScenario, SCENARIOS } from '@fenceline/sim';
import { describe, expect, it } from 'vitest';
import { type SimReplay } from '../src/app/(console)/simulator/replay-model';
import { STATE_CODE } from '../src/lib/shown-states';
import { PLAN_LIMITS, planDrawing } from '../src/lib/graph-plan';
import { compileTimeline, momentAt } from '../src/app/(console)/simulator/replay-timeline';
import { summaryState } from '../src/lib/shown-states';

const fanout = (n: number) => Array.from({ length: n }, (_, i) => ({ id: `t${i}`, type: 'sleep', dependsOn: [] as string[] }));
const diamond = (middle: number) => [
  { id: 'start', type: 'noop', dependsOn: [] },
  ...Array.from({ length: middle }, (_, i) => ({ id: `m${i}`, type: 'sleep', dependsOn: ['start'] })),
  { id: 'end', type: 'noop', dependsOn: Array.from({ length: middle }, (_, i) => `m${i}`) },
];

describe('Replay drawing plan', () => {
  it('draws a small DAG task by task', () => {
    const plan = planDrawing(diamond(3));
    expect(plan.nodes.map((n) => n.kind)).toEqual(['task', 'task', 'task', 'task', 'task']);
    expect(plan.nodes.find((n) => n.id === 'end')!.dependsOn.sort()).toEqual(['m0', 'm1', 'm2']);
  });

  it('draws a 10,000-task fan-out as its first few tasks and one group, laid out in a grid', () => {
    const plan = planDrawing(fanout(10_000));
    expect(plan.nodes).toHaveLength(PLAN_LIMITS.showEach + 1);
    const group = plan.nodes.at(-1)!;
    expect(group.kind).toBe('group');
    expect(group.members).toHaveLength(10_000 - PLAN_LIMITS.showEach);
    expect(plan.nodeOfTask[9_999]).toBe(group.id);
    // A grid: more than one column and more than one row.
    const xs = new Set([...plan.positions.values()].map((p) => p.x));
    const ys = new Set([...plan.positions.values()].map((p) => p.y));
    expect(xs.size).toBeGreaterThan(1);
    expect(ys.size).toBeGreaterThan(1);
  });

  it('groups the wide middle of a diamond and keeps its edges through the group', () => {
    const plan = planDrawing(diamond(500));
    const group = plan.nodes.find((n) => n.kind === 'group')!;
    expect(group.dependsOn).toEqual(['start']);
    expect(plan.nodes.find((n) => n.id === 'end')!.dependsOn.sort()).toEqual([group.id, 'm0', 'm1', 'm2', 'm3', 'm4', 'm5'].sort());
    expect(plan.nodes).toHaveLength(2 + PLAN_LIMITS.showEach + 1);
  });

  it('caps a long chain at the node limit with the remainder in one group', () => {
    const chain = Array.from({ length: 1_000 }, (_, i) => ({ id: `c${i}`, dependsOn: i === 0 ? [] : [`c${i - 1}`] }));
    const plan = planDrawing(chain);
    expect(plan.nodes).toHaveLength(PLAN_LIMITS.maxNodes);
    expect(plan.nodes.at(-1)!.kind).toBe('group');
    expect(plan.nodes.at(-1)!.dependsOn).toEqual([`c${PLAN_LIMITS.maxNodes - 2}`]);
  });
});

describe('Replay timeline', () => {
  it('replays a simulated fan-out: nothing before the run, a mix while it runs, every job succeeded at the end', async () => {
    // 60 five-minute jobs on 20 workers without a cap: three waves, done well inside the 30 minutes.
    const file = {
      ...SCENARIOS.fanout!,
      variants: undefined,
      cluster: { capFraction: 1 },
      workers: { count: 20, slots: 1, pollWaitMs: 25_000 },
      faultPhaseMs: 600_000,
      livenessMs: 1_200_000,
    };
    file.load = [
      { ...file.load[0]!, tasks: 60 },
      { ...file.load[1]!, count: 3 },
    ];
    const report = await runScenario(file, undefined, { dagReplay: true });
    const replay = report.runs[0]!.dagReplay! satisfies SimReplay;
    const tl = compileTimeline(replay);
    expect(tl.startMs).toBe(replay.runs[0]!.startedAtMs);
    expect(momentAt(tl, tl.startMs).counts[STATE_CODE.ready]).toBe(60);

    const before = momentAt(tl, 0);
    expect(before.counts[STATE_CODE.none]).toBe(60);

    const during = momentAt(tl, replay.runs[0]!.startedAtMs! + 400_000);
    expect(during.counts[STATE_CODE.leased]).toBeGreaterThan(0);
    expect(during.counts[STATE_CODE.succeeded]).toBeGreaterThan(0);
    expect(summaryState(during.counts)).toBe('mixed');

    const end = momentAt(tl, tl.endMs);
    expect(end.counts[STATE_CODE.succeeded]).toBe(60);
    expect(summaryState(end.counts)).toBe('succeeded');
    expect(end.exact).toBe(true);
  });

  it('answers a moment of a capped 50,000-change replay in milliseconds, and shows final states at its end', () => {
    const tasks = fanout(10_000);
    const transitions: SimReplay['transitions'] = [];
    for (let round = 0; round < 5; round++) {
      for (let i = 0; i < 10_000; i++) {
        const state = (['ready', 'leased', 'ready', 'leased', 'succeeded'] as const)[round]!;
        transitions.push({ atMs: round * 60_000 + i, runId: '1', taskId: `t${i}`, state, cause: round === 2 ? 'handed-back' : 'x', workerId: null, fence: 0, attempt: 1 });
      }
    }
    const replay: SimReplay = {
      dagId: 'fanout-0',
      tasks,
      runs: [{ runId: '1', trigger: 'manual', createdAtMs: 0, startedAtMs: 0, endedAtMs: 400_000, state: 'succeeded', endStates: tasks.map(() => 'succeeded') }],
      // Cut after 45,000 changes, as the recorder does at its cap.
      transitions: transitions.slice(0, 45_000),
      refusals: [],
      endMs: 600_000,
      limits: { maxTransitions: 45_000, maxRefusals: 1_000, maxJobs: 50_000 },
      dropped: { transitions: 5_000, refusals: 0, runs: 0 },
      truncatedAtMs: 245_000,
    };
    const tl = compileTimeline(replay);
    const t0 = performance.now();
    const middle = momentAt(tl, 130_000);
    const elapsedMs = performance.now() - t0;
    expect(elapsedMs).toBeLessThan(50);
    expect(middle.counts[STATE_CODE.ready]).toBe(10_000);
    expect(middle.handedBack).toBe(10_000);
    const pastCut = momentAt(tl, 300_000);
    expect(pastCut.exact).toBe(false);
    const end = momentAt(tl, 600_000);
    expect(end.exact).toBe(true);
    expect(end.counts[STATE_CODE.succeeded]).toBe(10_000);
  });
});
