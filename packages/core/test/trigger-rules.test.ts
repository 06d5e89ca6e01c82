import { describe, expect, it } from 'vitest';
import { parseDagSpec } from '../src/dag/validate';
import { RunMachine } from '../src/run/machine';
import { judge, TRIGGER_RULES, type DepTally } from '../src/run/trigger-rules';
import type { TaskSpec } from '../src/spec';

/** Two roots a and b, and one task per rule depending on both. */
const spec = parseDagSpec({
  id: 'rules',
  tasks: [
    { id: 'a', type: 'noop' },
    { id: 'b', type: 'noop' },
    ...TRIGGER_RULES.map((rule) => ({ id: rule.replace('_', '-'), type: 'noop', dependsOn: ['a', 'b'], trigger: rule })),
  ],
});

function machineAfter(a: 'succeeded' | 'failed', b: 'succeeded' | 'failed' | null) {
  const m = new RunMachine(spec);
  const settled = [];
  for (const [task, end] of [['a', a] as const, ['b', b] as const]) {
    if (end === null) continue;
    m.onLeased(task);
    settled.push(end === 'succeeded' ? m.onSucceeded(task) : m.onFailed(task));
  }
  return { m, settled };
}

describe('trigger rules', () => {
  it('decides each rule from how the dependencies ended', () => {
    const states = (a: 'succeeded' | 'failed', b: 'succeeded' | 'failed' | null) => {
      const { m } = machineAfter(a, b);
      return Object.fromEntries(TRIGGER_RULES.map((r) => [r, m.state(r.replace('_', '-'))]));
    };
    expect(states('succeeded', 'succeeded')).toEqual({ all_success: 'ready', all_done: 'ready', none_failed: 'ready', one_failed: 'skipped', one_success: 'ready' });
    expect(states('failed', 'succeeded')).toEqual({ all_success: 'upstream_failed', all_done: 'ready', none_failed: 'upstream_failed', one_failed: 'ready', one_success: 'ready' });
    expect(states('failed', 'failed')).toEqual({
      all_success: 'upstream_failed',
      all_done: 'ready',
      none_failed: 'upstream_failed',
      one_failed: 'ready',
      one_success: 'upstream_failed',
    });
    // Only one dependency has ended: the rules that can already decide do, the others wait.
    expect(states('failed', null)).toEqual({ all_success: 'upstream_failed', all_done: 'waiting', none_failed: 'upstream_failed', one_failed: 'ready', one_success: 'waiting' });
    expect(states('succeeded', null)).toEqual({ all_success: 'waiting', all_done: 'waiting', none_failed: 'waiting', one_failed: 'waiting', one_success: 'ready' });
  });

  it('runs a clean-up task after a failure and still fails the run; a skipped alert leaves it succeeded', () => {
    const pipeline = parseDagSpec({
      id: 'pipeline',
      tasks: [
        { id: 'extract', type: 'noop' },
        { id: 'load', type: 'noop', dependsOn: ['extract'] },
        { id: 'cleanup', type: 'noop', dependsOn: ['load'], trigger: 'all_done' },
        { id: 'alert', type: 'noop', dependsOn: ['load'], trigger: 'one_failed' },
      ],
    });
    const failing = new RunMachine(pipeline);
    failing.onLeased('extract');
    // extract fails: load cannot run, and its end (upstream_failed) lets cleanup and alert run.
    expect(failing.onFailed('extract')).toEqual({ ready: ['cleanup', 'alert'], upstreamFailed: ['load'], skipped: [] });
    for (const t of ['cleanup', 'alert']) {
      failing.onLeased(t);
      failing.onSucceeded(t);
    }
    expect(failing.outcome()).toBe('failed');

    const fine = new RunMachine(pipeline);
    for (const t of ['extract', 'load']) {
      fine.onLeased(t);
      const settled = fine.onSucceeded(t);
      if (t === 'load') expect(settled).toEqual({ ready: ['cleanup'], upstreamFailed: [], skipped: ['alert'] });
    }
    fine.onLeased('cleanup');
    fine.onSucceeded('cleanup');
    expect(fine.state('alert')).toBe('skipped');
    expect(fine.outcome()).toBe('succeeded');
  });

  it('carries a skip down an all_success chain without recursion, and settles a machine rebuilt from stored states', () => {
    const n = 19_990;
    const tasks: Partial<TaskSpec>[] = [
      { id: 'root', type: 'noop' },
      { id: 'gate', type: 'noop', dependsOn: ['root'], trigger: 'one_failed' },
      ...Array.from({ length: n }, (_, i) => ({ id: `c${i}`, type: 'noop', dependsOn: [i === 0 ? 'gate' : `c${i - 1}`] })),
    ];
    const chain = parseDagSpec({ id: 'chain', tasks: tasks as never });
    const m = new RunMachine(chain);
    m.onLeased('root');
    const settled = m.onSucceeded('root');
    expect(settled.skipped).toHaveLength(n + 1);
    expect(m.outcome()).toBe('succeeded');
    // A leader that crashed after root succeeded left the rest waiting: settleAll decides it.
    const rebuilt = new RunMachine(chain, new Map([['root', 'succeeded']]));
    expect(rebuilt.settleAll().skipped).toHaveLength(n + 1);
  });

  it('runs a task without dependencies at once, whatever its rule', () => {
    const none: DepTally = { total: 0, succeeded: 0, failed: 0, skipped: 0, cancelled: 0, done: 0 };
    for (const rule of TRIGGER_RULES) expect(judge(rule, none)).toBe('run');
  });

  it('is refused at apply time with the field named when the rule is not one of the five', () => {
    expect(() => parseDagSpec({ id: 'bad', tasks: [{ id: 'a', type: 'noop', trigger: 'sometimes' as never }] })).toThrow(/tasks\.0\.trigger|tasks\[0\]\.trigger/);
  });
});
