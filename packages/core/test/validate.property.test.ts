import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidDagError, LIMITS, parseDagSpec, topoOrder, validateDag } from '../src/index';

/**
 * Property tests over DAG specs: whatever the input, validation either accepts a spec that
 * really is a valid DAG, or refuses it with a typed error whose issues name the problem.
 * The oracles below are written independently of the validator.
 */

const ids = ['a', 'b', 'c', 'd', 'e', 'f', 'ünï', 'task-1', 'x.y', ''];
const cronExprs = ['* * * * *', '0 2 * * *', '*/5 * * * *', '0 0 30 2 *', 'not a cron', '61 * * * *', '* * *'];
const zones = ['UTC', 'Europe/Berlin', 'America/New_York', 'Mars/Olympus', ''];

const task = fc.record({
  id: fc.constantFrom(...ids),
  type: fc.constantFrom('noop', 'sleep', 'shell', 'http', 'custom-handler'),
  config: fc.oneof(
    fc.constant({}),
    fc.constant({ durationMs: 10 }),
    fc.constant({ durationMs: 'ten' }),
    fc.constant({ command: 'echo' }),
    fc.constant({ url: 'not a url' }),
    fc.constant({ url: 'http://127.0.0.1:1/x' }),
  ),
  dependsOn: fc.array(fc.constantFrom(...ids, 'ghost'), { maxLength: 3 }),
  retries: fc.oneof(fc.integer({ min: 0, max: 5 }), fc.constant(-1), fc.constant(1000)),
});

const schedule = fc.oneof(
  fc.record({ kind: fc.constant('cron'), cron: fc.constantFrom(...cronExprs), timezone: fc.constantFrom(...zones) }),
  fc.record({ kind: fc.constant('interval'), everyMs: fc.oneof(fc.integer({ min: 1000, max: 100_000 }), fc.constant(5)) }),
  fc.constant({ kind: 'manual' }),
  fc.constant({ kind: 'weekly' }),
);

const spec = fc.record({
  id: fc.oneof(fc.constantFrom('good-dag', 'dåg', '', 'a'.repeat(200)), fc.string({ maxLength: 20 })),
  name: fc.option(fc.string({ unit: 'grapheme', maxLength: 30 }), { nil: undefined }),
  schedule,
  tasks: fc.array(task, { maxLength: 7 }),
});

/** Independent cycle check (Kahn's algorithm) over well-formed tasks. */
function hasCycle(tasks: { id: string; dependsOn: string[] }[]): boolean {
  const indegree = new Map(tasks.map((t) => [t.id, 0]));
  const dependents = new Map<string, string[]>();
  for (const t of tasks) {
    for (const d of new Set(t.dependsOn)) {
      // Self-loops are refused as such; this oracle looks for cycles through other tasks.
      if (!indegree.has(d) || d === t.id) continue;
      indegree.set(t.id, indegree.get(t.id)! + 1);
      dependents.set(d, [...(dependents.get(d) ?? []), t.id]);
    }
  }
  const queue = [...indegree].filter(([, n]) => n === 0).map(([id]) => id);
  let seen = 0;
  while (queue.length > 0) {
    const id = queue.shift()!;
    seen++;
    for (const next of dependents.get(id) ?? []) {
      indegree.set(next, indegree.get(next)! - 1);
      if (indegree.get(next) === 0) queue.push(next);
    }
  }
  return seen < indegree.size;
}

describe('validation: properties over random and mutated specs', () => {
  it('accepts only real DAGs, and refuses everything else with a typed, located error', () => {
    fc.assert(
      fc.property(spec, (input) => {
        const result = validateDag(input);
        let thrown: unknown = null;
        try {
          parseDagSpec(input);
        } catch (err) {
          thrown = err;
        }
        if (result.ok) {
          expect(thrown).toBeNull();
          const taskIds = result.spec.tasks.map((t) => t.id);
          expect(taskIds.length).toBeGreaterThan(0);
          expect(new Set(taskIds).size).toBe(taskIds.length);
          for (const t of result.spec.tasks) for (const d of t.dependsOn) expect(taskIds).toContain(d);
          expect(() => topoOrder(result.spec)).not.toThrow();
          expect(hasCycle(result.spec.tasks)).toBe(false);
        } else {
          expect(thrown).toBeInstanceOf(InvalidDagError);
          expect((thrown as InvalidDagError).code).toBe('INVALID_DAG');
          expect(result.issues.length).toBeGreaterThan(0);
          for (const issue of result.issues) {
            expect(typeof issue.path).toBe('string');
            expect(issue.message.length).toBeGreaterThan(0);
          }
        }
      }),
      { numRuns: 600 },
    );
  });

  it('refuses every spec with a cycle, duplicate ids, an unknown dependency or a self-loop, naming it', () => {
    fc.assert(
      fc.property(spec, (input) => {
        const wellFormed = input.tasks.filter((t) => t.id !== '');
        const idsSeen = wellFormed.map((t) => t.id);
        const duplicate = new Set(idsSeen).size !== idsSeen.length;
        // A task whose own id is invalid is refused for that; its edges are not judged.
        const unknown = wellFormed.some((t) => t.dependsOn.some((d) => d !== '' && !idsSeen.includes(d)));
        const selfLoop = wellFormed.some((t) => t.dependsOn.includes(t.id));
        const cycle = !duplicate && hasCycle(wellFormed);
        const result = validateDag(input);
        const text = result.ok
          ? ''
          : result.issues
              .map((i) => i.message)
              .join('\n')
              .toLowerCase();
        if (duplicate) expect(text).toMatch(/duplicate|used by \d+ tasks/);
        if (unknown) expect(text).toMatch(/not a task|unknown/);
        if (selfLoop) expect(text).toMatch(/itself|self|cycle/);
        if (cycle) expect(text).toMatch(/cycle/);
        if (input.tasks.length === 0) expect(result.ok).toBe(false);
      }),
      { numRuns: 600 },
    );
  });

  it('refuses a valid spec once mutated into an invalid one', () => {
    const base = {
      id: 'chain',
      schedule: { kind: 'manual' },
      tasks: [
        { id: 'a', type: 'noop' },
        { id: 'b', type: 'noop', dependsOn: ['a'] },
        { id: 'c', type: 'noop', dependsOn: ['b'] },
      ],
    };
    expect(validateDag(base).ok).toBe(true);
    const mutations: [string, (s: typeof base) => unknown, RegExp][] = [
      ['back edge', (s) => ({ ...s, tasks: [{ ...s.tasks[0], dependsOn: ['c'] }, ...s.tasks.slice(1)] }), /cycle/i],
      ['self-loop', (s) => ({ ...s, tasks: [{ ...s.tasks[0], dependsOn: ['a'] }, ...s.tasks.slice(1)] }), /itself|cycle/i],
      ['removed dependency', (s) => ({ ...s, tasks: s.tasks.slice(1) }), /"a"/],
      ['duplicate id', (s) => ({ ...s, tasks: [...s.tasks, { id: 'b', type: 'noop' }] }), /duplicate|used by 2 tasks/i],
      ['bad cron', (s) => ({ ...s, schedule: { kind: 'cron', cron: '99 * * * *' } }), /cron/i],
      ['bad time zone', (s) => ({ ...s, schedule: { kind: 'cron', cron: '* * * * *', timezone: 'Nowhere/Land' } }), /zone/i],
      ['wrong type', (s) => ({ ...s, tasks: [{ ...s.tasks[0], retries: 'three' }, ...s.tasks.slice(1)] }), /retries|number/i],
      ['oversized config', (s) => ({ ...s, tasks: [{ ...s.tasks[0], config: { blob: 'x'.repeat(LIMITS.maxTaskConfigBytes + 1) } }, ...s.tasks.slice(1)] }), /config|bytes|limit/i],
      ['huge fan-out', (s) => ({ ...s, tasks: Array.from({ length: LIMITS.maxTasksPerDag + 1 }, (_, i) => ({ id: `t${i}`, type: 'noop' })) }), /limit|tasks/i],
    ];
    for (const [what, mutate, pattern] of mutations) {
      const result = validateDag(mutate(base));
      expect(result.ok, what).toBe(false);
      if (!result.ok) expect(result.issues.map((i) => i.message).join('\n'), what).toMatch(pattern);
    }
  });
});
