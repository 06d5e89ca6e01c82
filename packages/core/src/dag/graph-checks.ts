import type { DagIssue } from '../errors';
import type { LooseTask, TaskContext } from './spec-shape';

/** The graph's edges as written: task ids unique, and each dependsOn entry naming another task, once. */

/** Duplicate ids: one issue per id, on its second occurrence, naming every position. Returns every id's positions. */
export function checkDuplicateIds(tasks: LooseTask[], issues: DagIssue[]): Map<string, number[]> {
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
  return positions;
}

/** A task's dependsOn entries: not itself, a task of this DAG, and each listed once. */
export function checkDependsOn(task: LooseTask, { label, at, withIds }: TaskContext, known: Map<string, unknown>, issues: DagIssue[]): void {
  const seen = new Set<string>();
  task.dependsOn.forEach((dep, j) => {
    if (task.id !== undefined && dep === task.id) {
      issues.push(withIds({ kind: 'self-dependency', path: `${at}.dependsOn.${j}`, message: `${label} depends on itself; remove "${dep}" from its dependsOn.` }));
    } else if (!known.has(dep)) {
      issues.push(
        withIds({
          kind: 'unknown-dependency',
          path: `${at}.dependsOn.${j}`,
          message: `${label} depends on "${dep}", which is not a task of this DAG; add a task "${dep}" or remove it from dependsOn.`,
        }),
      );
    } else if (seen.has(dep)) {
      issues.push(
        withIds({ kind: 'duplicate-dependency', path: `${at}.dependsOn.${j}`, message: `${label} lists "${dep}" more than once in dependsOn; list each dependency once.` }),
      );
    }
    seen.add(dep);
  });
}
