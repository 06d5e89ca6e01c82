'use client';

import type { DagIssue } from '@fenceline/core';

/** The validator's messages about one field, shown under it; all of them when no field is given. */
export function IssueList({ issues, field }: { issues: DagIssue[]; field?: (path: string) => boolean }) {
  const shown = field ? issues.filter((i) => field(i.path)) : issues;
  if (shown.length === 0) return null;
  return (
    <ul className="field-issues" data-testid="field-issues">
      {shown.map((i, k) => (
        <li key={k}>{i.message}</li>
      ))}
    </ul>
  );
}
