import { describe, expect, it } from 'vitest';
import { parseDagSpec, validateDag } from '../src/dag/validate';
import { DAG_ISSUE_KINDS, errorFromJSON, InvalidDagError, type DagIssue, type DagIssueKind } from '../src/errors';
import { LIMITS } from '../src/limits';
import { resourceProblems } from '../src/resources/limits';

// Clients branch on an issue's kind, never on its message: the console's editor draws the
// edges of a `cycle` issue on the canvas. Each case is a spec with one known problem.

function issuesOf(input: unknown): DagIssue[] {
  const result = validateDag(input);
  if (result.ok) throw new Error('expected the spec to be refused');
  return result.issues;
}

function task(id: string, dependsOn: string[] = [], extra: Record<string, unknown> = {}) {
  return { id, type: 'noop', dependsOn, ...extra };
}

const kindsOf = (input: unknown) => issuesOf(input).map((i) => `${i.kind} ${i.path}`);

describe('validation issue kinds', () => {
  const cases: [DagIssueKind, unknown, string[]][] = [
    ['shape', { id: 'd', tasks: [task('a', [], { retries: 'twice' })] }, ['shape tasks.0.retries']],
    ['not-json', { id: 'd', tasks: [task('a', [], { type: 'my-handler', config: { n: 1n } })] }, ['not-json ']],
    ['no-tasks', { id: 'd', tasks: [] }, ['no-tasks tasks']],
    ['limit', { id: 'd', tasks: [task('a', [], { type: 'my-handler', config: { blob: 'x'.repeat(LIMITS.maxTaskConfigBytes) } })] }, ['limit tasks.0.config']],
    ['duplicate-task', { id: 'd', tasks: [task('a'), task('a')] }, ['duplicate-task tasks.1.id']],
    ['self-dependency', { id: 'd', tasks: [task('a', ['a'])] }, ['self-dependency tasks.0.dependsOn.0']],
    ['unknown-dependency', { id: 'd', tasks: [task('a', ['ghost'])] }, ['unknown-dependency tasks.0.dependsOn.0']],
    ['duplicate-dependency', { id: 'd', tasks: [task('a'), task('b', ['a', 'a'])] }, ['duplicate-dependency tasks.1.dependsOn.1']],
    ['cycle', { id: 'd', tasks: [task('a', ['b']), task('b', ['a'])] }, ['cycle tasks.0.dependsOn']],
    ['retry-backoff', { id: 'd', tasks: [task('a', [], { retryBackoffMs: 600_000, retryBackoffMaxMs: 1_000 })] }, ['retry-backoff tasks.0.retryBackoffMaxMs']],
    ['config', { id: 'd', tasks: [task('a', [], { type: 'sleep', config: {} })] }, ['config tasks.0.config.durationMs']],
    ['bad-timezone', { id: 'd', schedule: { kind: 'cron', cron: '0 2 * * *', timezone: 'Mars/Olympus_Mons' }, tasks: [task('a')] }, ['bad-timezone schedule.timezone']],
    ['bad-cron', { id: 'd', schedule: { kind: 'cron', cron: '61 * * * *' }, tasks: [task('a')] }, ['bad-cron schedule.cron']],
  ];

  for (const [kind, input, expected] of cases) {
    it(`marks ${kind}`, () => {
      expect(kindsOf(input)).toEqual(expected);
    });
  }

  it('has a case for every kind but more-cycles, which has its own, and resource-limit, which the store checks', () => {
    expect(new Set([...cases.map(([kind]) => kind), 'more-cycles', 'resource-limit'])).toEqual(new Set(DAG_ISSUE_KINDS));
  });

  it('marks resource-limit on the task that asks for more than a limit has, or for one that does not exist', () => {
    const spec = parseDagSpec({ id: 'd', tasks: [task('a', [], { resources: { warehouse: 3 } }), task('b', [], { resources: { gpu: 1 } })] });
    const issues = resourceProblems(spec, new Map([['warehouse', 2]]));
    expect(issues.map((i) => `${i.kind} ${i.path}`)).toEqual(['resource-limit tasks.0.resources.warehouse', 'resource-limit tasks.1.resources.gpu']);
    expect(issuesOf({ id: 'd', tasks: [task('a', [], { resources: { warehouse: 0 } })] }).map((i) => `${i.kind} ${i.path}`)).toEqual(['shape tasks.0.resources.warehouse']);
  });

  it('refuses a pool or label of the wrong syntax as a shape issue on its field', () => {
    expect(kindsOf({ id: 'd', tasks: [task('a', [], { pool: 'GPU pool' })] })).toEqual(['shape tasks.0.pool']);
    expect(kindsOf({ id: 'd', tasks: [task('a', [], { labels: ['ok', 'region=EU'] })] })).toEqual(['shape tasks.0.labels.1']);
    expect(kindsOf({ id: 'd', priority: 1.5, tasks: [task('a')] })).toEqual(['shape priority']);
  });

  it('marks each limit as limit: tasks, dependencies, spec bytes', () => {
    const many = Array.from({ length: LIMITS.maxTasksPerDag + 1 }, (_, i) => task(`t${i}`));
    expect(kindsOf({ id: 'd', tasks: many })).toEqual(['limit tasks']);
    const deps = Array.from({ length: LIMITS.maxDependenciesPerTask + 1 }, (_, i) => task(`d${i}`));
    // With as many dependencies allowed as tasks, this DAG is over both limits.
    const overDeps = kindsOf({
      id: 'd',
      tasks: [
        ...deps,
        task(
          'join',
          deps.map((t) => t.id),
        ),
      ],
    });
    expect(overDeps).toContain(`limit tasks.${deps.length}.dependsOn`);
    expect(overDeps.every((k) => k.startsWith('limit '))).toBe(true);
    const heavy = Array.from({ length: 500 }, (_, i) => task(`t${i}`, [], { type: 'my-handler', config: { blob: 'x'.repeat(9_000) } }));
    expect(kindsOf({ id: 'd', tasks: heavy })).toEqual(['limit ']);
  });

  it('marks a cron expression that never matches as bad-cron', () => {
    expect(kindsOf({ id: 'd', schedule: { kind: 'cron', cron: '0 0 30 2 *' }, tasks: [task('a')] })).toEqual(['bad-cron schedule.cron']);
  });

  it('lists twenty cycles as cycle, each a loop in order, and sums up the rest as more-cycles', () => {
    const tasks = Array.from({ length: 22 }, (_, i) => [task(`a${i}`, [`b${i}`]), task(`b${i}`, [`a${i}`])]).flat();
    const issues = issuesOf({ id: 'd', tasks });
    expect(issues.filter((i) => i.kind === 'cycle')).toHaveLength(20);
    expect(issues.find((i) => i.kind === 'cycle')!.taskIds).toEqual(['a0', 'b0']);
    const rest = issues.filter((i) => i.kind === 'more-cycles');
    expect(rest).toHaveLength(1);
    expect(rest[0]!.taskIds).toEqual(['a20', 'b20', 'a21', 'b21']);
  });

  it('keeps the kinds when the issues travel as an error on the wire', () => {
    let thrown: unknown;
    try {
      parseDagSpec({ id: 'd', tasks: [task('a', ['a']), task('b', ['ghost'])] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(InvalidDagError);
    const back = errorFromJSON(JSON.parse(JSON.stringify(thrown)) as { code: string; message: string; details: Record<string, unknown> });
    expect(back).toBeInstanceOf(InvalidDagError);
    expect((back as InvalidDagError).issues.map((i) => i.kind)).toEqual(['self-dependency', 'unknown-dependency']);
  });
});
