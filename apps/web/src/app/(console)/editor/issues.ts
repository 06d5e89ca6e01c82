import type { DagIssue } from '@fenceline/core';

/** The tasks an issue names, drawn as problems on the canvas. */
export function problemTasks(issues: DagIssue[]): Set<string> {
  return new Set(issues.flatMap((i) => i.taskIds ?? []));
}

/** The edges (`a->b`) that close a cycle: a cycle issue lists its loop in order. */
export function cycleEdges(issues: DagIssue[]): Set<string> {
  const out = new Set<string>();
  for (const issue of issues) {
    if (issue.kind !== 'cycle' || !issue.taskIds) continue;
    const ids = issue.taskIds;
    ids.forEach((id, i) => out.add(`${id}->${ids[(i + 1) % ids.length]}`));
  }
  return out;
}

/** The issues the task panel shows for the task at `index`: those at its path or naming it. */
export function taskIssues(issues: DagIssue[], index: number, taskId: string): DagIssue[] {
  return issues.filter((i) => i.path === `tasks.${index}` || i.path.startsWith(`tasks.${index}.`) || (i.taskIds?.includes(taskId) ?? false));
}

/** The issues the DAG panel shows: every one not at a task's path. */
export function dagIssues(issues: DagIssue[]): DagIssue[] {
  return issues.filter((i) => !i.path.startsWith('tasks.'));
}
