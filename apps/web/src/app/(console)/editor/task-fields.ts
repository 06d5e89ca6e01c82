import type { DraftTask } from './draft';

/* How the task panel shows and reads a task's pool, labels and resources as text. */

/** Labels as the field shows them: comma-separated. */
export const labelsText = (v: unknown): string => (Array.isArray(v) ? v.join(', ') : '');

/** The labels typed in the field, without blanks. */
export const labelsOf = (text: string): string[] | undefined => {
  const list = text
    .split(',')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return list.length === 0 ? undefined : list;
};

/** Resources as the field shows them: `name=units`, comma-separated. */
export const resourcesText = (v: unknown): string =>
  typeof v === 'object' && v !== null && !Array.isArray(v)
    ? Object.entries(v as Record<string, unknown>)
        .map(([k, n]) => `${k}=${String(n)}`)
        .join(', ')
    : '';

/**
 * Reads `warehouse=1, api=2` into units per limit. Each entry must be a name, `=` and a whole
 * number; anything else is named back so the draft is not changed to something half-read.
 * Names and units are then checked by the validator as the store checks them.
 */
export function parseResources(text: string): { value: Record<string, number> | undefined; error: string | null } {
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return { value: undefined, error: null };
  const value: Record<string, number> = {};
  for (const entry of entries) {
    const m = /^([^=\s]+)\s*=\s*(-?\d+)$/.exec(entry);
    if (!m) return { value: undefined, error: `"${entry}" is not name=units (such as warehouse=1)` };
    value[m[1]!] = Number(m[2]);
  }
  return { value, error: null };
}

/** Sets or removes one optional field of a task: an empty value leaves the field out of the spec. */
export function withField(task: DraftTask, field: string, value: unknown): DraftTask {
  const { [field]: _old, ...rest } = task;
  return value === undefined ? (rest as DraftTask) : ({ ...rest, [field]: value } as DraftTask);
}
