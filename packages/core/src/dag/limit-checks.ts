import type { DagIssue } from '../errors';
import { LIMITS } from '../limits';
import type { LooseTask, TaskContext } from './spec-shape';

/** The size limits of LIMITS: the spec's JSON, its task count, a task's dependencies and config. */

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

export function checkSpecSize(value: unknown, isParsed: boolean, issues: DagIssue[]): void {
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

export function checkTaskCount(tasks: LooseTask[], issues: DagIssue[]): void {
  if (tasks.length > LIMITS.maxTasksPerDag) {
    issues.push({
      kind: 'limit',
      path: 'tasks',
      message: `The DAG has ${tasks.length} tasks; the limit is ${LIMITS.maxTasksPerDag} (LIMITS.maxTasksPerDag). Split it into several DAGs.`,
    });
  }
}

export function checkDependencyCount(task: LooseTask, { label, at, withIds }: TaskContext, issues: DagIssue[]): void {
  if (task.dependsOn.length > LIMITS.maxDependenciesPerTask) {
    issues.push(
      withIds({
        kind: 'limit',
        path: `${at}.dependsOn`,
        message: `${label} has ${task.dependsOn.length} dependencies; the limit is ${LIMITS.maxDependenciesPerTask} (LIMITS.maxDependenciesPerTask). Put a join task in between.`,
      }),
    );
  }
}

export function checkConfigSize(task: LooseTask, { label, at, withIds }: TaskContext, issues: DagIssue[]): void {
  const configBytes = jsonBytes(task.config);
  if (configBytes !== undefined && configBytes > LIMITS.maxTaskConfigBytes) {
    issues.push(
      withIds({
        kind: 'limit',
        path: `${at}.config`,
        message: `${label} has ${formatBytes(configBytes)} of config; the limit is ${formatBytes(LIMITS.maxTaskConfigBytes)} (LIMITS.maxTaskConfigBytes). Keep large inputs outside the spec and pass a reference to them.`,
      }),
    );
  }
}
