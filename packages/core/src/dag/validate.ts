import type { z } from 'zod';
import { InvalidDagError, type DagIssue } from '../errors';
import { DEFAULTS, LIMITS } from '../limits';
import { BUILTIN_CONFIG_SCHEMAS, dagSpecSchema, type DagSpec } from '../spec';
import { cronFor } from '../schedule/slots';
import { buildGraphIndex, type GraphIndex } from './graph';

/**
 * DAG validation: the zod schema first, then every structural check zod cannot express.
 * All problems are collected, not just the first, so an author (or the visual editor,
 * which highlights `taskIds`) can fix them in one pass. Messages name the task, the
 * limit and what to do about it.
 *
 * When the schema refuses the input, the structural checks still run on whatever parts
 * of it have the right shape, so a bad field does not hide a cycle.
 *
 * Everything is iterative and linear in the size of the spec: a 20,000-task chain
 * validates without deep recursion.
 */

export type DagValidation = { ok: true; spec: DagSpec } | { ok: false; issues: DagIssue[] };

/** At most this many cycle issues are listed one by one; the rest are summarised. */
const MAX_CYCLE_ISSUES = 20;

/** The slice of a task the structural checks need; every field is optional on raw input. */
interface LooseTask {
  position: number;
  id?: string;
  type?: string;
  config?: unknown;
  dependsOn: string[];
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
}

export function validateDag(input: unknown): DagValidation {
  const issues: DagIssue[] = [];
  const parsed = dagSpecSchema.safeParse(input);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issues.push(fromZodIssue(issue, input));
  }

  checkSpecSize(parsed.success ? parsed.data : input, parsed.success, issues);

  const tasks = parsed.success ? parsed.data.tasks.map(toLoose) : looseTasks(input);
  checkTasks(tasks, issues, parsed.success || Array.isArray(field(input, 'tasks')));
  checkSchedule(parsed.success ? parsed.data.schedule : field(input, 'schedule'), issues);

  if (issues.length > 0 || !parsed.success) return { ok: false, issues };
  return { ok: true, spec: parsed.data };
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

/**
 * JSON with object keys sorted at every level, so two specs that differ only in key order
 * serialize the same. Otherwise it is JSON.stringify: undefined properties are dropped,
 * toJSON is honoured, array order is kept. (JavaScript always enumerates integer-like
 * keys first, so such keys come out in numeric order; that is still deterministic, which
 * is all equality needs.)
 */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
    const record = v as Record<string, unknown>;
    const sorted: Record<string, unknown> = {};
    for (const k of Object.keys(record).sort()) sorted[k] = record[k];
    return sorted;
  }) ?? 'null';
}

/** Two specs are equal when their canonical JSON is: key order does not matter, array order does. */
export function specsEqual(a: DagSpec, b: DagSpec): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** UTF-8 length of a string without encoding it (equal to TextEncoder's output length). */
export function utf8ByteLength(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x80) bytes += 1;
    else if (code < 0x800) bytes += 2;
    else if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        bytes += 4;
        i++;
      } else {
        bytes += 3;
      }
    } else bytes += 3;
  }
  return bytes;
}

// ---------------------------------------------------------------------------------

function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

function toLoose(task: DagSpec['tasks'][number], position: number): LooseTask {
  return {
    position,
    id: task.id,
    type: task.type,
    config: task.config,
    dependsOn: task.dependsOn,
    retryBackoffMs: task.retryBackoffMs,
    retryBackoffMaxMs: task.retryBackoffMaxMs,
  };
}

/** The task fields that have the right type on raw input; the schema already reported the rest. */
function looseTasks(input: unknown): LooseTask[] {
  const tasks = field(input, 'tasks');
  if (!Array.isArray(tasks)) return [];
  return tasks.map((task, position) => {
    const id = field(task, 'id');
    const type = field(task, 'type');
    const dependsOn = field(task, 'dependsOn');
    const base = field(task, 'retryBackoffMs');
    const max = field(task, 'retryBackoffMaxMs');
    return {
      position,
      id: typeof id === 'string' ? id : undefined,
      type: typeof type === 'string' ? type : undefined,
      config: field(task, 'config') ?? {},
      dependsOn: Array.isArray(dependsOn) ? dependsOn.filter((d): d is string => typeof d === 'string') : [],
      retryBackoffMs: base === undefined ? DEFAULTS.retryBackoffMs : typeof base === 'number' ? base : undefined,
      retryBackoffMaxMs: max === undefined ? DEFAULTS.retryBackoffMaxMs : typeof max === 'number' ? max : undefined,
    };
  });
}

function pathOf(path: readonly PropertyKey[]): string {
  return path.map((p) => String(p)).join('.');
}

function taskLabel(input: unknown, position: number): string {
  const tasks = field(input, 'tasks');
  const id = Array.isArray(tasks) ? field(tasks[position], 'id') : undefined;
  return typeof id === 'string' && id !== '' ? `task "${id}"` : `task #${position + 1}`;
}

function fromZodIssue(issue: z.core.$ZodIssue, input: unknown): DagIssue {
  const path = pathOf(issue.path);
  const fieldName = issue.path.length > 0 ? String(issue.path[issue.path.length - 1]) : '';
  let message = issue.message;
  if (issue.code === 'invalid_type' && /received undefined$/.test(message)) {
    message = `"${fieldName}" is required (expected ${issue.expected})`;
  } else if (fieldName !== '') {
    message = `"${fieldName}": ${message}`;
  }
  const result: DagIssue = { kind: 'shape', path, message };
  if (issue.path[0] === 'tasks' && typeof issue.path[1] === 'number') {
    result.message = `${taskLabel(input, issue.path[1])}: ${message}`;
    const id = field((field(input, 'tasks') as unknown[])[issue.path[1]], 'id');
    if (typeof id === 'string') result.taskIds = [id];
  }
  return result;
}

function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

function jsonBytes(value: unknown): number | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : utf8ByteLength(text);
  } catch {
    return undefined;
  }
}

function checkSpecSize(value: unknown, isParsed: boolean, issues: DagIssue[]): void {
  const bytes = jsonBytes(value);
  if (bytes === undefined) {
    issues.push({ kind: 'not-json', path: '', message: 'The DAG spec cannot be serialized as JSON (it has a cycle of references or a BigInt); send plain JSON data.' });
    return;
  }
  if (bytes > LIMITS.maxSpecBytes) {
    issues.push({
      kind: 'limit',
      path: '',
      message:
        `The DAG spec is ${formatBytes(bytes)} of JSON${isParsed ? ' with defaults filled in' : ''}; the limit is ` +
        `${formatBytes(LIMITS.maxSpecBytes)} (LIMITS.maxSpecBytes). Move large task configuration out of the spec ` +
        '(for example into files or a URL the task reads) or split the DAG into several DAGs.',
    });
  }
}

function checkTasks(tasks: LooseTask[], issues: DagIssue[], tasksIsArray: boolean): void {
  if (tasksIsArray && tasks.length === 0) {
    issues.push({ kind: 'no-tasks', path: 'tasks', message: 'The DAG has no tasks; add at least one task.' });
    return;
  }
  if (tasks.length > LIMITS.maxTasksPerDag) {
    issues.push({
      kind: 'limit',
      path: 'tasks',
      message: `The DAG has ${tasks.length} tasks; the limit is ${LIMITS.maxTasksPerDag} (LIMITS.maxTasksPerDag). Split it into several DAGs.`,
    });
  }

  // Duplicate ids: one issue per id, on its second occurrence, naming every position.
  const positions = new Map<string, number[]>();
  for (const task of tasks) {
    if (task.id === undefined) continue;
    const list = positions.get(task.id);
    if (list === undefined) positions.set(task.id, [task.position]);
    else list.push(task.position);
  }
  for (const [id, list] of positions) {
    if (list.length < 2) continue;
    issues.push({
      kind: 'duplicate-task',
      path: `tasks.${list[1]}.id`,
      message: `Task id "${id}" is used by ${list.length} tasks (${list.map((p) => `tasks.${p}`).join(', ')}); task ids must be unique within a DAG, so rename all but one.`,
      taskIds: [id],
    });
  }

  for (const task of tasks) {
    const label = task.id !== undefined ? `Task "${task.id}"` : `Task #${task.position + 1}`;
    const taskIds = task.id !== undefined ? [task.id] : undefined;
    const at = `tasks.${task.position}`;
    const withIds = (issue: DagIssue): DagIssue => (taskIds ? { ...issue, taskIds } : issue);

    if (task.dependsOn.length > LIMITS.maxDependenciesPerTask) {
      issues.push(withIds({
        kind: 'limit',
        path: `${at}.dependsOn`,
        message: `${label} has ${task.dependsOn.length} dependencies; the limit is ${LIMITS.maxDependenciesPerTask} (LIMITS.maxDependenciesPerTask). Put a join task in between.`,
      }));
    }
    const seen = new Set<string>();
    task.dependsOn.forEach((dep, j) => {
      if (task.id !== undefined && dep === task.id) {
        issues.push(withIds({ kind: 'self-dependency', path: `${at}.dependsOn.${j}`, message: `${label} depends on itself; remove "${dep}" from its dependsOn.` }));
      } else if (!positions.has(dep)) {
        issues.push(withIds({
          kind: 'unknown-dependency',
          path: `${at}.dependsOn.${j}`,
          message: `${label} depends on "${dep}", which is not a task of this DAG; add a task "${dep}" or remove it from dependsOn.`,
        }));
      } else if (seen.has(dep)) {
        issues.push(withIds({ kind: 'duplicate-dependency', path: `${at}.dependsOn.${j}`, message: `${label} lists "${dep}" more than once in dependsOn; list each dependency once.` }));
      }
      seen.add(dep);
    });

    if (task.retryBackoffMs !== undefined && task.retryBackoffMaxMs !== undefined && task.retryBackoffMaxMs < task.retryBackoffMs) {
      issues.push(withIds({
        kind: 'retry-backoff',
        path: `${at}.retryBackoffMaxMs`,
        message: `${label} has retryBackoffMaxMs ${task.retryBackoffMaxMs} below retryBackoffMs ${task.retryBackoffMs}; raise retryBackoffMaxMs to at least ${task.retryBackoffMs} or lower retryBackoffMs.`,
      }));
    }

    const configBytes = jsonBytes(task.config);
    if (configBytes !== undefined && configBytes > LIMITS.maxTaskConfigBytes) {
      issues.push(withIds({
        kind: 'limit',
        path: `${at}.config`,
        message: `${label} has ${formatBytes(configBytes)} of config; the limit is ${formatBytes(LIMITS.maxTaskConfigBytes)} (LIMITS.maxTaskConfigBytes). Keep large inputs outside the spec and pass a reference to them.`,
      }));
    }

    if (task.type !== undefined && Object.hasOwn(BUILTIN_CONFIG_SCHEMAS, task.type)) {
      const schema = BUILTIN_CONFIG_SCHEMAS[task.type as keyof typeof BUILTIN_CONFIG_SCHEMAS];
      const result = schema.safeParse(task.config);
      if (!result.success) {
        for (const issue of result.error.issues) {
          const sub = pathOf(issue.path);
          const what = issue.code === 'invalid_type' && /received undefined$/.test(issue.message) ? `"${sub}" is required (expected ${issue.expected})` : `${sub ? `"${sub}": ` : ''}${issue.message}`;
          issues.push(withIds({
            kind: 'config',
            path: sub ? `${at}.config.${sub}` : `${at}.config`,
            message: `${label} has type "${task.type}", whose config is invalid: ${what}.`,
          }));
        }
      }
    }
  }

  checkCycles(tasks, issues);
}

/**
 * Cycles, found as the strongly connected components of the dependency graph (Tarjan's
 * algorithm with an explicit stack, so a 20,000-task chain cannot overflow the call
 * stack). Each component with more than one task is one issue naming a concrete cycle
 * through it; self-dependencies are reported above and ignored here.
 */
function checkCycles(tasks: LooseTask[], issues: DagIssue[]): void {
  const named = tasks.filter((t): t is LooseTask & { id: string } => t.id !== undefined);
  const g = buildGraphIndex({ tasks: named });
  const firstPosition = new Map<string, number>();
  for (const t of named) if (!firstPosition.has(t.id)) firstPosition.set(t.id, t.position);
  const n = g.ids.length;
  const order = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const components: number[][] = [];
  let counter = 0;
  const frames: { v: number; edge: number }[] = [];
  for (let s = 0; s < n; s++) {
    if (order[s] !== -1) continue;
    order[s] = low[s] = counter++;
    stack.push(s);
    onStack[s] = 1;
    frames.push({ v: s, edge: 0 });
    while (frames.length > 0) {
      const frame = frames[frames.length - 1]!;
      const out = g.dependents[frame.v]!;
      if (frame.edge < out.length) {
        const w = out[frame.edge++]!;
        if (order[w] === -1) {
          order[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          frames.push({ v: w, edge: 0 });
        } else if (onStack[w]) {
          low[frame.v] = Math.min(low[frame.v]!, order[w]!);
        }
        continue;
      }
      frames.pop();
      const v = frame.v;
      const parent = frames[frames.length - 1];
      if (parent !== undefined) low[parent.v] = Math.min(low[parent.v]!, low[v]!);
      if (low[v] === order[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        if (component.length > 1) components.push(component);
      }
    }
  }
  components.forEach((c) => c.sort((a, b) => a - b));
  components.sort((a, b) => a[0]! - b[0]!);

  components.slice(0, MAX_CYCLE_ISSUES).forEach((component) => {
    const cycle = cycleThrough(g, component);
    const ids = cycle.map((i) => g.ids[i]!);
    const others = component.length - cycle.length;
    issues.push({
      kind: 'cycle',
      path: `tasks.${firstPosition.get(ids[0]!)}.dependsOn`,
      message:
        `cycle: ${[...ids, ids[0]].join(' -> ')} (each task depends on the one before it), so none of them can ever start. ` +
        `Remove one of these dependencies${others > 0 ? `; ${others} more tasks are caught in the same loop` : ''}.`,
      taskIds: ids,
    });
  });
  if (components.length > MAX_CYCLE_ISSUES) {
    const rest = components.slice(MAX_CYCLE_ISSUES);
    issues.push({
      kind: 'more-cycles',
      path: 'tasks',
      message: `${rest.length} more cycles (involving ${rest.reduce((s, c) => s + c.length, 0)} tasks) are not listed one by one; fix the ones above and validate again.`,
      taskIds: rest.flatMap((c) => c.map((i) => g.ids[i]!)),
    });
  }
}

/**
 * A shortest cycle through the first task of a strongly connected component, found by a
 * breadth-first search that stays inside the component. Every member reaches every
 * other, so the search always gets back to the start.
 */
function cycleThrough(g: GraphIndex, component: number[]): number[] {
  const inside = new Set(component);
  const start = component[0]!;
  const parent = new Map<number, number>([[start, -1]]);
  const queue = [start];
  for (let head = 0; head < queue.length; head++) {
    const v = queue[head]!;
    for (const w of g.dependents[v]!) {
      if (!inside.has(w)) continue;
      if (w === start) {
        const path: number[] = [];
        for (let at = v; at !== -1; at = parent.get(at)!) path.push(at);
        return path.reverse();
      }
      if (parent.has(w)) continue;
      parent.set(w, v);
      queue.push(w);
    }
  }
  return component;
}

function checkSchedule(schedule: unknown, issues: DagIssue[]): void {
  if (field(schedule, 'kind') !== 'cron') return;
  const expr = field(schedule, 'cron');
  const tzField = field(schedule, 'timezone');
  const timezone = tzField === undefined ? 'UTC' : tzField;
  let zoneOk = typeof timezone === 'string';
  if (typeof timezone === 'string') {
    try {
      Intl.DateTimeFormat(undefined, { timeZone: timezone });
    } catch {
      zoneOk = false;
      issues.push({
        kind: 'bad-timezone',
        path: 'schedule.timezone',
        message: `Unknown time zone "${timezone}"; use an IANA time zone name such as "UTC", "Europe/Berlin" or "America/New_York".`,
      });
    }
  }
  if (typeof expr !== 'string' || expr === '') return;
  try {
    // With a bad zone, the expression is still checked (in UTC) so both problems show.
    const cron = cronFor(expr, zoneOk ? (timezone as string) : 'UTC');
    // A pattern can be well formed and still never match (30 February); croner then has
    // no next run from any instant, so asking from the epoch is a fixed, pure check.
    if (cron.nextRun(new Date(0)) === null) {
      issues.push({
        kind: 'bad-cron',
        path: 'schedule.cron',
        message: `Cron expression "${expr}" never matches any date (check the day of month against the month); fix it or use a manual schedule.`,
      });
    }
  } catch (error) {
    const reason = error instanceof Error ? error.message.replace(/^CronPattern: /, '') : String(error);
    issues.push({
      kind: 'bad-cron',
      path: 'schedule.cron',
      message:
        `Invalid cron expression "${expr}": ${reason}. Use five fields (minute hour day-of-month month day-of-week), ` +
        'or six with seconds first; for example "0 2 * * *" runs at 02:00 every day.',
    });
  }
}
