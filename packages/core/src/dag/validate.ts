import { InvalidDagError, type DagIssue } from '../errors';
import { jsonProblems } from '../input/free-form';
import { LIMITS } from '../limits';
import { dagSpecSchema, type DagSpec } from '../spec';
import { checkCycles } from './cycles';
import { checkDependsOn, checkDuplicateIds } from './graph-checks';
import { checkConfigSize, checkDependencyCount, checkSpecSize, checkTaskCount } from './limit-checks';
import { checkParamPlaceholders } from './param-checks';
import { checkSchedule } from './schedule-checks';
import { field, fromZodIssue, looseTasks, taskContext, toLoose, type LooseTask } from './spec-shape';
import { checkBuiltinConfig, checkRetryBackoff } from './task-checks';

export { canonicalJson, specsEqual } from './canonical';
export { utf8ByteLength } from './limit-checks';

/**
 * DAG validation: the zod schema first, then every structural check zod cannot express
 * (limit-checks, graph-checks, cycles, task-checks, schedule-checks). All problems are
 * collected, not just the first, so an author (or the visual editor, which highlights
 * `taskIds`) can fix them in one pass. Messages name the task, the limit and what to do
 * about it.
 *
 * When the schema refuses the input, the structural checks still run on whatever parts
 * of it have the right shape (spec-shape), so a bad field does not hide a cycle.
 *
 * Everything is iterative and linear in the size of the spec: a 20,000-task chain
 * validates without deep recursion.
 */

export type DagValidation = { ok: true; spec: DagSpec } | { ok: false; issues: DagIssue[] };

export function validateDag(input: unknown): DagValidation {
  const issues: DagIssue[] = [];
  // Nesting past the limit ends validation here: the checks below walk the spec.
  if (checkFreeForm(input, issues)) return { ok: false, issues };
  const parsed = dagSpecSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issues.push(fromZodIssue(issue, input));
  }

  checkSpecSize(parsed.success ? parsed.data : input, parsed.success, issues);

  const tasks = parsed.success ? parsed.data.tasks.map(toLoose) : looseTasks(input);
  checkTasks(tasks, issues, parsed.success || Array.isArray(field(input, 'tasks')));
  checkSchedule(parsed.success ? parsed.data.schedule : field(input, 'schedule'), issues);
  checkParamPlaceholders(tasks, parsed.success ? parsed.data.params : field(input, 'params'), issues);

  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, spec: parsed.data };
}

/**
 * The free-form checks every stored text and JSON passes (input/free-form.ts): no NUL and
 * no lone surrogate in any string or key, since the store cannot keep them, and nesting
 * within LIMITS.maxJsonDepth. Returns whether the nesting is too deep to go on.
 */
function checkFreeForm(input: unknown, issues: DagIssue[]): boolean {
  let tooDeep = false;
  for (const problem of jsonProblems(input, { maxDepth: LIMITS.maxJsonDepth, maxBytes: Number.POSITIVE_INFINITY })) {
    // Values that are not JSON data are checkSpecSize's to report, once for the spec.
    if (problem.kind === 'not-json' || problem.kind === 'size') continue;
    tooDeep ||= problem.kind === 'depth';
    const kind = problem.kind === 'depth' ? 'limit' : 'shape';
    const path = problem.path.map(String).join('.');
    const message = path === '' ? `The DAG spec ${problem.message}.` : `${problem.message[0]!.toUpperCase()}${problem.message.slice(1)}.`;
    issues.push({ kind, path, message });
  }
  return tooDeep;
}

/** Like validateDag, but throws InvalidDagError listing every issue. */
export function parseDagSpec(input: unknown): DagSpec {
  const result = validateDag(input);
  if (result.ok) return result.spec;
  throw new InvalidDagError(summarizeIssues(input, result.issues), result.issues);
}

/** One line for logs and error messages: the first few issues and how many more there are. */
export function summarizeIssues(input: unknown, issues: DagIssue[]): string {
  const id = field(input, 'id');
  const name = typeof id === 'string' && id !== '' ? `DAG "${id}"` : 'The DAG spec';
  const shown = issues.slice(0, 3).map((i) => (i.path ? `${i.path}: ${i.message}` : i.message));
  const more = issues.length > shown.length ? `; and ${issues.length - shown.length} more` : '';
  return `${name} is invalid (${issues.length} ${issues.length === 1 ? 'issue' : 'issues'}): ${shown.join('; ')}${more}`;
}

/** The checks on the task list, each task's in the order an author reads its fields, then cycles across tasks. */
function checkTasks(tasks: LooseTask[], issues: DagIssue[], tasksIsArray: boolean): void {
  if (tasksIsArray && tasks.length === 0) {
    issues.push({ kind: 'no-tasks', path: 'tasks', message: 'The DAG has no tasks; add at least one task.' });
    return;
  }
  checkTaskCount(tasks, issues);
  const positions = checkDuplicateIds(tasks, issues);
  for (const task of tasks) {
    const context = taskContext(task);
    checkDependencyCount(task, context, issues);
    checkDependsOn(task, context, positions, issues);
    checkRetryBackoff(task, context, issues);
    checkConfigSize(task, context, issues);
    checkBuiltinConfig(task, context, issues);
  }
  checkCycles(tasks, issues);
}
