import { describe, expect, it } from 'vitest';
import { canonicalJson, parseDagSpec, specsEqual, utf8ByteLength, validateDag } from '../src/dag/validate';
import { InvalidDagError } from '../src/errors';
import { DEFAULTS, LIMITS } from '../src/limits';
import type { DagIssue } from '../src/errors';

function issuesOf(input: unknown): DagIssue[] {
  const result = validateDag(input);
  if (result.ok) throw new Error('expected the spec to be refused');
  return result.issues;
}

function task(id: string, dependsOn: string[] = [], extra: Record<string, unknown> = {}) {
  return { id, type: 'noop', dependsOn, ...extra };
}

describe('validation', () => {
  it('accepts a valid spec and fills in the defaults', () => {
    const result = validateDag({ id: 'etl', tasks: [task('extract'), task('load', ['extract'])] });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.spec.schedule).toEqual({ kind: 'manual' });
    expect(result.spec.catchup).toEqual({ policy: 'latest', windowMs: DEFAULTS.catchupWindowMs });
    expect(result.spec.maxActiveRuns).toBe(DEFAULTS.maxActiveRuns);
    expect(result.spec.paused).toBe(false);
    expect(result.spec.tasks[1]).toEqual({
      id: 'load',
      type: 'noop',
      config: {},
      dependsOn: ['extract'],
      retries: 0,
      retryBackoffMs: DEFAULTS.retryBackoffMs,
      retryBackoffMaxMs: DEFAULTS.retryBackoffMaxMs,
      timeoutMs: DEFAULTS.timeoutMs,
      priority: 0,
    });
  });

  it('accepts a cron schedule with a time zone and built-in configs', () => {
    const result = validateDag({
      id: 'nightly',
      schedule: { kind: 'cron', cron: '0 2 * * *', timezone: 'America/New_York' },
      tasks: [
        task('wait', [], { type: 'sleep', config: { durationMs: 10 } }),
        task('run', ['wait'], { type: 'shell', config: { command: 'echo', args: ['hi'] } }),
        task('ping', ['run'], { type: 'http', config: { url: 'https://example.com/hook' } }),
        task('custom', ['ping'], { type: 'my-handler', config: { anything: [1, 2, 3] } }),
      ],
    });
    expect(result).toMatchObject({ ok: true });
  });

  it('refuses a cycle and names it in order', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a', ['c']), task('b', ['a']), task('c', ['b']), task('d')] });
    const cycle = issues.filter((i) => i.kind === 'cycle');
    expect(cycle).toHaveLength(1);
    expect(cycle[0]!.message).toContain('cycle: a -> b -> c -> a');
    expect(cycle[0]!.taskIds).toEqual(['a', 'b', 'c']);
    expect(cycle[0]!.path).toBe('tasks.0.dependsOn');
  });

  it('reports each distinct cycle', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a', ['b']), task('b', ['a']), task('x', ['y']), task('y', ['x']), task('z', ['a', 'x'])] });
    const cycles = issues.filter((i) => i.kind === 'cycle').map((i) => i.message.split(' (')[0]);
    expect(cycles).toEqual(['cycle: a -> b -> a', 'cycle: x -> y -> x']);
  });

  it('refuses an unknown dependency and says which task asked for it', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a'), task('b', ['x'])] });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'tasks.1.dependsOn.0', taskIds: ['b'] });
    expect(issues[0]!.message).toContain('Task "b" depends on "x", which is not a task of this DAG');
  });

  it('refuses a self-dependency', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a', ['a'])] });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.message).toContain('depends on itself');
  });

  it('refuses a dependency listed twice', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a'), task('b', ['a', 'a'])] });
    expect(issues.map((i) => i.path)).toEqual(['tasks.1.dependsOn.1']);
  });

  it('refuses duplicate task ids and names them', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a'), task('b'), task('a')] });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'tasks.2.id', taskIds: ['a'] });
    expect(issues[0]!.message).toContain('Task id "a" is used by 2 tasks (tasks.0, tasks.2)');
  });

  it('refuses an empty DAG', () => {
    const issues = issuesOf({ id: 'd', tasks: [] });
    expect(issues).toEqual([{ kind: 'no-tasks', path: 'tasks', message: 'The DAG has no tasks; add at least one task.' }]);
  });

  it('refuses a bad cron expression', () => {
    for (const cron of ['61 * * * *', 'every day', '* * * *', '* * * * * * *']) {
      const issues = issuesOf({ id: 'd', schedule: { kind: 'cron', cron }, tasks: [task('a')] });
      expect(issues).toHaveLength(1);
      expect(issues[0]!.path).toBe('schedule.cron');
      expect(issues[0]!.message).toContain(`Invalid cron expression "${cron}"`);
    }
  });

  it('refuses a cron expression that never matches', () => {
    const issues = issuesOf({ id: 'd', schedule: { kind: 'cron', cron: '0 0 30 2 *' }, tasks: [task('a')] });
    expect(issues[0]!.message).toContain('never matches');
  });

  it('refuses an unknown time zone', () => {
    const issues = issuesOf({ id: 'd', schedule: { kind: 'cron', cron: '0 2 * * *', timezone: 'Mars/Olympus_Mons' }, tasks: [task('a')] });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'schedule.timezone' });
    expect(issues[0]!.message).toContain('Unknown time zone "Mars/Olympus_Mons"');
  });

  it('refuses more tasks than the limit and says what to do', () => {
    const tasks = Array.from({ length: LIMITS.maxTasksPerDag + 1 }, (_, i) => ({ id: `t${i}`, type: 'noop' }));
    const issues = issuesOf({ id: 'big', tasks });
    expect(issues.map((i) => i.message)).toContain(
      `The DAG has ${LIMITS.maxTasksPerDag + 1} tasks; the limit is ${LIMITS.maxTasksPerDag} (LIMITS.maxTasksPerDag). Split it into several DAGs.`,
    );
  });

  it('refuses a spec larger than the byte limit', () => {
    const description = 'x'.repeat(9_000);
    const tasks = Array.from({ length: 500 }, (_, i) => ({ id: `t${i}`, type: 'my-handler', config: { blob: description } }));
    const issues = issuesOf({ id: 'heavy', tasks });
    expect(issues.some((i) => i.path === '' && i.message.includes('LIMITS.maxSpecBytes'))).toBe(true);
  });

  it('refuses a task config larger than the byte limit', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a', [], { type: 'my-handler', config: { blob: 'é'.repeat(LIMITS.maxTaskConfigBytes / 2) } })] });
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ path: 'tasks.0.config', taskIds: ['a'] });
    expect(issues[0]!.message).toContain('LIMITS.maxTaskConfigBytes');
  });

  it('refuses a bad built-in config', () => {
    const issues = issuesOf({
      id: 'd',
      tasks: [
        task('s', [], { type: 'sleep', config: {} }),
        task('h', [], { type: 'http', config: { url: 'not a url', method: 'FETCH' } }),
        task('sh', [], { type: 'shell', config: { command: '' } }),
      ],
    });
    expect(issues.map((i) => i.path).sort()).toEqual(['tasks.0.config.durationMs', 'tasks.1.config.method', 'tasks.1.config.url', 'tasks.2.config.command']);
    expect(issues.find((i) => i.path === 'tasks.0.config.durationMs')!.message).toContain('Task "s" has type "sleep", whose config is invalid: "durationMs" is required');
  });

  it('refuses a maximum backoff below the base backoff', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a', [], { retryBackoffMs: 600_000 })] });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.path).toBe('tasks.0.retryBackoffMaxMs');
  });

  it('maps schema errors to paths and still runs the structural checks', () => {
    const issues = issuesOf({ id: 'd', tasks: [task('a', ['b'], { retries: 99 }), task('b', ['a']), { id: 'bad id', type: 'noop' }] });
    const paths = issues.map((i) => i.path);
    expect(paths).toContain('tasks.0.retries');
    expect(paths).toContain('tasks.2.id');
    expect(issues.some((i) => i.message.startsWith('cycle: a -> b -> a'))).toBe(true);
    expect(issues.find((i) => i.path === 'tasks.0.retries')!.message).toMatch(/^task "a": "retries": /);
  });

  it('refuses input that is not an object', () => {
    expect(issuesOf('hello')[0]!.path).toBe('');
    expect(issuesOf({ tasks: [task('a')] })[0]).toMatchObject({ path: 'id' });
  });

  it('validates a 20,000-task chain without overflowing the stack, quickly', () => {
    const tasks = Array.from({ length: LIMITS.maxTasksPerDag }, (_, i) => ({ id: `t${i}`, type: 'noop', dependsOn: i === 0 ? [] : [`t${i - 1}`] }));
    const started = performance.now();
    const result = validateDag({ id: 'chain', tasks });
    expect(result.ok).toBe(true);
    expect(performance.now() - started).toBeLessThan(2_000);
  });

  it('names a cycle that closes a 20,000-task chain', () => {
    const tasks = Array.from({ length: LIMITS.maxTasksPerDag }, (_, i) => ({
      id: `t${i}`,
      type: 'noop',
      dependsOn: [`t${(i + LIMITS.maxTasksPerDag - 1) % LIMITS.maxTasksPerDag}`],
    }));
    const issues = issuesOf({ id: 'ring', tasks });
    expect(issues).toHaveLength(1);
    expect(issues[0]!.taskIds).toHaveLength(LIMITS.maxTasksPerDag);
    expect(issues[0]!.message.startsWith('cycle: t0 -> t1 -> t2')).toBe(true);
  });

  it('parseDagSpec throws InvalidDagError carrying every issue', () => {
    try {
      parseDagSpec({ id: 'd', tasks: [task('a', ['x']), task('a')] });
      expect.unreachable();
    } catch (error) {
      expect(error).toBeInstanceOf(InvalidDagError);
      const e = error as InvalidDagError;
      expect(e.code).toBe('INVALID_DAG');
      expect(e.issues).toHaveLength(2);
      expect(e.message).toMatch(/^DAG "d" is invalid \(2 issues\): /);
    }
    expect(parseDagSpec({ id: 'ok', tasks: [task('a')] }).id).toBe('ok');
  });
});

describe('spec equality', () => {
  it('ignores key order and keeps array order', () => {
    const a = parseDagSpec({ id: 'd', tasks: [task('a'), task('b', ['a'])] });
    const b = parseDagSpec({
      tasks: [
        { dependsOn: [], type: 'noop', id: 'a' },
        { type: 'noop', dependsOn: ['a'], id: 'b' },
      ],
      id: 'd',
    });
    expect(specsEqual(a, b)).toBe(true);
    const c = parseDagSpec({ id: 'd', tasks: [task('b'), task('a')] });
    expect(specsEqual(a, c)).toBe(false);
  });

  it('writes canonical JSON with sorted keys at every level', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: undefined } })).toBe('{"a":{"d":[3,{"y":2,"z":1}]},"b":1}');
  });

  it('counts UTF-8 bytes as TextEncoder does', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a\ud800b', '\udc00']) {
      expect(utf8ByteLength(text)).toBe(new TextEncoder().encode(text).length);
    }
  });
});
