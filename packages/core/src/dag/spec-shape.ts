import type { z } from 'zod';
import type { DagIssue } from '../errors';
import { DEFAULTS } from '../limits';
import type { DagSpec } from '../spec';

/**
 * Reading a spec that may not have the right shape: the schema's own issues turned into
 * DagIssues that name the task, and the parts of raw input the structural checks can use.
 */

/** The slice of a task the structural checks need; every field is optional on raw input. */
export interface LooseTask {
  position: number;
  id?: string;
  type?: string;
  config?: unknown;
  dependsOn: string[];
  retryBackoffMs?: number;
  retryBackoffMaxMs?: number;
}

/** How the issues about one task name it, locate it and tag it with its id. */
export interface TaskContext {
  label: string;
  at: string;
  withIds(issue: DagIssue): DagIssue;
}

export function field(value: unknown, key: string): unknown {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>)[key] : undefined;
}

export function pathOf(path: readonly PropertyKey[]): string {
  return path.map((p) => String(p)).join('.');
}

export function taskContext(task: LooseTask): TaskContext {
  const taskIds = task.id !== undefined ? [task.id] : undefined;
  return {
    label: task.id !== undefined ? `Task "${task.id}"` : `Task #${task.position + 1}`,
    at: `tasks.${task.position}`,
    withIds: (issue) => (taskIds ? { ...issue, taskIds } : issue),
  };
}

export function toLoose(task: DagSpec['tasks'][number], position: number): LooseTask {
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
export function looseTasks(input: unknown): LooseTask[] {
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

function taskLabel(input: unknown, position: number): string {
  const tasks = field(input, 'tasks');
  const id = Array.isArray(tasks) ? field(tasks[position], 'id') : undefined;
  return typeof id === 'string' && id !== '' ? `task "${id}"` : `task #${position + 1}`;
}

export function fromZodIssue(issue: z.core.$ZodIssue, input: unknown): DagIssue {
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
