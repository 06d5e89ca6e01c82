import { InvalidInputError, paramFromText, type DagSpec } from '@fenceline/core';

/**
 * The values a `trigger` passes: `--params '<json object>'` first, then each
 * `--param NAME=VALUE`, whose text is read as the parameter's declared type (so
 * `--param batch=10` is the number 10 for an integer parameter). The store checks the result
 * against the declaration; nothing here decides whether a value is good.
 */
export function triggerParams(args: string[], declared: DagSpec['params']): Record<string, unknown> | undefined {
  let params: Record<string, unknown> | undefined;
  const json = valuesOf(args, '--params');
  for (const text of json) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new InvalidInputError('--params must be a JSON object, such as \'{"batch": 10}\'', { field: 'params' });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidInputError('--params must be a JSON object', { field: 'params' });
    params = { ...params, ...(parsed as Record<string, unknown>) };
  }
  for (const pair of valuesOf(args, '--param')) {
    const at = pair.indexOf('=');
    if (at <= 0) throw new InvalidInputError(`--param takes NAME=VALUE, got "${pair}"`, { field: 'params' });
    const name = pair.slice(0, at);
    params = { ...params, [name]: paramFromText(declared?.[name]?.type, pair.slice(at + 1)) };
  }
  return params;
}

/** Every value given to a flag that may repeat. */
function valuesOf(args: string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] !== name) continue;
    const value = args[i + 1];
    if (value === undefined) throw new InvalidInputError(`${name} needs a value`, { field: 'params' });
    out.push(value);
    i++;
  }
  return out;
}

/** The lines that name each bad field of a refused trigger, for the operator to fix. */
export function paramIssueLines(details: Record<string, unknown>): string[] {
  const issues = details.issues;
  if (!Array.isArray(issues)) return [];
  return issues.map((i: { field?: unknown; message?: unknown }) => `  ${String(i.field)}: ${String(i.message)}`);
}
