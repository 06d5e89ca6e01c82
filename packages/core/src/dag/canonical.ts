import type { DagSpec } from '../spec';

/**
 * JSON with object keys sorted at every level, so two specs that differ only in key order
 * serialize the same. Otherwise it is JSON.stringify: undefined properties are dropped,
 * toJSON is honoured, array order is kept. (JavaScript always enumerates integer-like
 * keys first, so such keys come out in numeric order; that is still deterministic, which
 * is all equality needs.)
 */
export function canonicalJson(value: unknown): string {
  return (
    JSON.stringify(value, (_key, v: unknown) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
      const record = v as Record<string, unknown>;
      const sorted: Record<string, unknown> = {};
      for (const k of Object.keys(record).sort()) sorted[k] = record[k];
      return sorted;
    }) ?? 'null'
  );
}

/** Two specs are equal when their canonical JSON is: key order does not matter, array order does. */
export function specsEqual(a: DagSpec, b: DagSpec): boolean {
  return canonicalJson(a) === canonicalJson(b);
}
