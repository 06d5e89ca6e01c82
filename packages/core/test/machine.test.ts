import { describe, expect, it } from 'vitest';
import { parseDagSpec } from '../src/dag/validate';
import { initialJobs, RunMachine } from '../src/run/machine';
import type { JobState } from '../src/model';

const diamond = parseDagSpec({
  id: 'diamond',
  tasks: [
    { id: 'a', type: 'noop', retries: 2, priority: 5, retryBackoffMs: 1_000, retryBackoffMaxMs: 8_000, timeoutMs: 30_000 },
    { id: 'b', type: 'noop', dependsOn: ['a'] },
    { id: 'c', type: 'noop', dependsOn: ['a'] },
    { id: 'd', type: 'noop', dependsOn: ['b', 'c'] },
    { id: 'e', type: 'noop' },
  ],
});

function run(machine: RunMachine, taskId: string): string[] {
  machine.onLeased(taskId);
  return machine.onSucceeded(taskId).ready;
}

describe('run state machine', () => {
  it('starts a run with the roots ready and everything else waiting', () => {
    expect(initialJobs(diamond)).toEqual([
      { taskId: 'a', state: 'ready', maxAttempts: 3, priority: 5, retryBackoffMs: 1_000, retryBackoffMaxMs: 8_000, timeoutMs: 30_000 },
      { taskId: 'b', state: 'waiting', maxAttempts: 1, priority: 0, retryBackoffMs: 5_000, retryBackoffMaxMs: 300_000, timeoutMs: 3_600_000 },
      { taskId: 'c', state: 'waiting', maxAttempts: 1, priority: 0, retryBackoffMs: 5_000, retryBackoffMaxMs: 300_000, timeoutMs: 3_600_000 },
      { taskId: 'd', state: 'waiting', maxAttempts: 1, priority: 0, retryBackoffMs: 5_000, retryBackoffMaxMs: 300_000, timeoutMs: 3_600_000 },
      { taskId: 'e', state: 'ready', maxAttempts: 1, priority: 0, retryBackoffMs: 5_000, retryBackoffMaxMs: 300_000, timeoutMs: 3_600_000 },
    ]);
    const machine = new RunMachine(diamond);
    expect(machine.readyTasks()).toEqual(['a', 'e']);
    expect(machine.counts()).toMatchObject({ ready: 2, waiting: 3 });
    expect(machine.outcome()).toBe('running');
  });

  it('makes a dependent ready only when all its dependencies succeeded (diamond)', () => {
    const machine = new RunMachine(diamond);
    expect(run(machine, 'a')).toEqual(['b', 'c']);
    expect(run(machine, 'b')).toEqual([]);
    expect(machine.state('d')).toBe('waiting');
    expect(run(machine, 'c')).toEqual(['d']);
    expect(machine.state('d')).toBe('ready');
    expect(machine.readyTasks()).toEqual(['e', 'd']);
  });

  it('succeeds the run when every task succeeded', () => {
    const machine = new RunMachine(diamond);
    for (const t of ['a', 'e', 'b', 'c', 'd']) run(machine, t);
    expect(machine.outcome()).toBe('succeeded');
    expect(machine.counts().succeeded).toBe(5);
  });

  it('marks everything downstream of a final failure upstream_failed and fails the run', () => {
    const machine = new RunMachine(diamond);
    run(machine, 'a');
    machine.onLeased('b');
    expect(machine.onFailed('b')).toEqual({ ready: [], upstreamFailed: ['d'], skipped: [] });
    expect(machine.state('d')).toBe('upstream_failed');
    expect(machine.outcome()).toBe('running');
    run(machine, 'c');
    expect(machine.state('d')).toBe('upstream_failed');
    run(machine, 'e');
    expect(machine.outcome()).toBe('failed');
  });

  it('fails a root and takes its whole downstream with it', () => {
    const machine = new RunMachine(diamond);
    machine.onLeased('a');
    expect(machine.onFailed('a').upstreamFailed.sort()).toEqual(['b', 'c', 'd']);
    expect(machine.readyTasks()).toEqual(['e']);
  });

  it('puts a retried task back to ready', () => {
    const machine = new RunMachine(diamond);
    machine.onLeased('a');
    machine.onRetry('a');
    expect(machine.state('a')).toBe('ready');
    expect(machine.readyTasks()).toContain('a');
  });

  it('refuses impossible transitions without changing state', () => {
    const machine = new RunMachine(diamond);
    expect(() => machine.onSucceeded('d')).toThrow(/cannot succeed from state "waiting"/);
    expect(() => machine.onLeased('b')).toThrow(/cannot be leased/);
    expect(() => machine.onRetry('a')).toThrow(/cannot be retried/);
    expect(() => machine.state('zz')).toThrow(/not a task/);
    run(machine, 'e');
    expect(() => machine.onSucceeded('e')).toThrow(/from state "succeeded"/);
    expect(machine.counts()).toMatchObject({ ready: 1, waiting: 3, succeeded: 1 });
  });

  it('resumes from stored states, as a new leader does after a failover', () => {
    const states = new Map<string, JobState>([
      ['a', 'succeeded'],
      ['b', 'succeeded'],
      ['c', 'leased'],
      ['d', 'waiting'],
      ['e', 'ready'],
    ]);
    const machine = new RunMachine(diamond, states);
    expect(machine.readyTasks()).toEqual(['e']);
    expect(machine.onSucceeded('c').ready).toEqual(['d']);
    expect(() => new RunMachine(diamond, new Map([['zz', 'ready']]))).toThrow(/not a task/);
  });

  it('cancels every task not yet terminal', () => {
    const machine = new RunMachine(diamond);
    run(machine, 'e');
    expect(machine.cancelAll().cancelled).toEqual(['a', 'b', 'c', 'd']);
    expect(machine.outcome()).toBe('cancelled');
  });

  it('handles a 20,000-task fan-out with one counter update per edge', () => {
    const tasks = [
      { id: 'root', type: 'noop' },
      ...Array.from({ length: 19_998 }, (_, i) => ({ id: `w${i}`, type: 'noop', dependsOn: ['root'] })),
      { id: 'join', type: 'noop', dependsOn: Array.from({ length: 19_998 }, (_, i) => `w${i}`) },
    ];
    const spec = parseDagSpec({ id: 'fan', tasks });
    const machine = new RunMachine(spec);
    const started = performance.now();
    expect(run(machine, 'root')).toHaveLength(19_998);
    let joined: string[] = [];
    for (let i = 0; i < 19_998; i++) joined = run(machine, `w${i}`);
    expect(joined).toEqual(['join']);
    run(machine, 'join');
    expect(machine.outcome()).toBe('succeeded');
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
