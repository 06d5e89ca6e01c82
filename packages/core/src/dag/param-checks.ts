import type { DagIssue } from '../errors';
import { PARAM_PLACEHOLDER } from './params';
import { field, taskContext, type LooseTask } from './spec-shape';

/**
 * An HTTP task's `{{params.NAME}}` placeholders must each name a declared parameter: a
 * misspelt one would otherwise fail every run of the DAG at its worker, long after it was
 * applied.
 */
export function checkParamPlaceholders(tasks: LooseTask[], declared: unknown, issues: DagIssue[]): void {
  const names = new Set(typeof declared === 'object' && declared !== null && !Array.isArray(declared) ? Object.keys(declared) : []);
  for (const task of tasks) {
    if (task.type !== 'http') continue;
    const { label, at, withIds } = taskContext(task);
    const headers = field(task.config, 'headers');
    const texts: [string, unknown][] = [
      ['url', field(task.config, 'url')],
      ['body', field(task.config, 'body')],
      ...(typeof headers === 'object' && headers !== null ? Object.entries(headers).map(([k, v]): [string, unknown] => [`headers.${k}`, v]) : []),
    ];
    for (const [path, text] of texts) {
      if (typeof text !== 'string') continue;
      for (const match of text.matchAll(PARAM_PLACEHOLDER)) {
        const name = match[1]!;
        if (names.has(name)) continue;
        issues.push(
          withIds({
            kind: 'config',
            path: `${at}.config.${path}`,
            message: `${label} uses {{params.${name}}}, but the DAG declares no parameter "${name}"; declare it under params or fix the name.`,
          }),
        );
      }
    }
  }
}
