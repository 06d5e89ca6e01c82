'use client';

import type { DagValidation } from '@fenceline/core';
import type { RoutingWarning } from './routing-warnings';

/** Every issue the store's validator finds in the draft, or that it passes, and what live workers would not serve. */
export function ValidationCard({ validation, warnings }: { validation: DagValidation; warnings: RoutingWarning[] }) {
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
      {warnings.length > 0 ? (
        <ul className="issues warnings" data-testid="routing-warnings">
          {warnings.map((w, k) => (
            <li key={k} className="warn-text" data-testid="routing-warning">
              <code>tasks.{w.index}</code> {w.message}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
