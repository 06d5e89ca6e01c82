import type { DagIssue } from '../errors';
import { BUILTIN_CONFIG_SCHEMAS } from '../spec';
import { pathOf, type LooseTask, type TaskContext } from './spec-shape';

/** A task's own settings: a retry backoff whose cap is not below its base, and a built-in type's config. */

export function checkRetryBackoff(task: LooseTask, { label, at, withIds }: TaskContext, issues: DagIssue[]): void {
  if (task.retryBackoffMs !== undefined && task.retryBackoffMaxMs !== undefined && task.retryBackoffMaxMs < task.retryBackoffMs) {
    issues.push(
      withIds({
        kind: 'retry-backoff',
        path: `${at}.retryBackoffMaxMs`,
        message: `${label} has retryBackoffMaxMs ${task.retryBackoffMaxMs} below retryBackoffMs ${task.retryBackoffMs}; raise retryBackoffMaxMs to at least ${task.retryBackoffMs} or lower retryBackoffMs.`,
      }),
    );
  }
}

/** A task of a built-in type (noop, sleep, shell, http) must have a config its schema accepts. */
export function checkBuiltinConfig(task: LooseTask, { label, at, withIds }: TaskContext, issues: DagIssue[]): void {
  if (task.type === undefined || !Object.hasOwn(BUILTIN_CONFIG_SCHEMAS, task.type)) return;
  const schema = BUILTIN_CONFIG_SCHEMAS[task.type as keyof typeof BUILTIN_CONFIG_SCHEMAS];
  const result = schema.safeParse(task.config);
  if (result.success) return;
  for (const issue of result.error.issues) {
    const sub = pathOf(issue.path);
    const what =
      issue.code === 'invalid_type' && /received undefined$/.test(issue.message)
        ? `"${sub}" is required (expected ${issue.expected})`
        : `${sub ? `"${sub}": ` : ''}${issue.message}`;
    issues.push(
      withIds({
        kind: 'config',
        path: sub ? `${at}.config.${sub}` : `${at}.config`,
        message: `${label} has type "${task.type}", whose config is invalid: ${what}.`,
      }),
    );
  }
}
