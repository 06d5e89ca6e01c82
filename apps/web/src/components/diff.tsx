export interface DiffLine {
  kind: 'same' | 'added' | 'removed';
  text: string;
}

/** Above this many lines on both sides, the LCS table would be too large for the browser. */
const MAX_CELLS = 4_000_000;

/**
 * A line diff of two texts by longest common subsequence: small specs get an exact diff;
 * huge ones fall back to "everything removed, everything added" rather than freezing the tab.
 */
export function diffLines(before: string, after: string): DiffLine[] {
  // An empty side has no lines at all (''.split would give one empty line).
  const a = before === '' ? [] : before.split('\n');
  const b = after === '' ? [] : after.split('\n');
  if (a.length * b.length > MAX_CELLS) {
    return [...a.map((text) => ({ kind: 'removed' as const, text })), ...b.map((text) => ({ kind: 'added' as const, text }))];
  }
  const n = a.length;
  const m = b.length;
  const table = new Uint32Array((n + 1) * (m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i * (m + 1) + j] = a[i] === b[j] ? table[(i + 1) * (m + 1) + j + 1]! + 1 : Math.max(table[(i + 1) * (m + 1) + j]!, table[i * (m + 1) + j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (a[i] === b[j]) {
      out.push({ kind: 'same', text: a[i]! });
      i++;
      j++;
    } else if (table[(i + 1) * (m + 1) + j]! >= table[i * (m + 1) + j + 1]!) out.push({ kind: 'removed', text: a[i++]! });
    else out.push({ kind: 'added', text: b[j++]! });
  }
  while (i < n) out.push({ kind: 'removed', text: a[i++]! });
  while (j < m) out.push({ kind: 'added', text: b[j++]! });
  return out;
}

/** JSON with sorted keys and two-space indent, so equal specs diff as equal. */
export function prettySpec(value: unknown): string {
  return JSON.stringify(
    value,
    (_k, v: unknown) => {
      if (typeof v !== 'object' || v === null || Array.isArray(v)) return v;
      const o = v as Record<string, unknown>;
      return Object.fromEntries(
        Object.keys(o)
          .sort()
          .map((k) => [k, o[k]]),
      );
    },
    2,
  );
}

export function DiffView({ lines, context = 3 }: { lines: DiffLine[]; context?: number }) {
  // Show changed lines with a few lines of context around them, and fold the rest.
  const keep = new Array<boolean>(lines.length).fill(false);
  lines.forEach((l, i) => {
    if (l.kind === 'same') return;
    for (let k = Math.max(0, i - context); k <= Math.min(lines.length - 1, i + context); k++) keep[k] = true;
  });
  const rows: { key: number; line: DiffLine | null }[] = [];
  let folded = false;
  lines.forEach((line, i) => {
    if (keep[i]) {
      rows.push({ key: i, line });
      folded = false;
    } else if (!folded) {
      rows.push({ key: i, line: null });
      folded = true;
    }
  });
  if (!lines.some((l) => l.kind !== 'same')) return <div className="muted">No changes.</div>;
  return (
    // A scrolling box takes focus, so a keyboard can scroll it.
    <pre className="diff" data-testid="version-diff" tabIndex={0}>
      {rows.map(({ key, line }) =>
        line ? (
          <div key={key} className={`diff-${line.kind}`}>
            {line.kind === 'added' ? '+ ' : line.kind === 'removed' ? '- ' : '  '}
            {line.text}
          </div>
        ) : (
          <div key={key} className="diff-fold">
            ⋯
          </div>
        ),
      )}
    </pre>
  );
}
