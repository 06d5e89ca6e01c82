'use client';

import type { DagValidation } from '@fenceline/core';

/** Every issue the store's validator finds in the draft, or that it passes. */
export function ValidationCard({ validation }: { validation: DagValidation }) {
  const issues = validation.ok ? [] : validation.issues;
  return (
    <section className="card">
      <div className="card-head">
        <h2>Validation</h2>
        {validation.ok ? (
          <span className="badge state-succeeded" data-testid="validation-ok">
            valid
          </span>
        ) : (
          <span className="badge state-failed" data-testid="issue-count">
            {issues.length} {issues.length === 1 ? 'issue' : 'issues'}
          </span>
        )}
      </div>
      {issues.length > 0 ? (
        <ul className="issues" data-testid="validation-issues">
          {issues.map((i, k) => (
            <li key={k} data-testid={i.kind === 'cycle' ? 'issue-cycle' : 'issue'}>
              <code>{i.path || '(spec)'}</code> {i.message}
            </li>
          ))}
        </ul>
      ) : (
        <div className="muted">The spec passes every check the store makes on save.</div>
      )}
    </section>
  );
}
