'use client';

import { useState } from 'react';
import { paramFromText, paramNames, type ParamSpec } from '@fenceline/core';
import { describeError } from '@/components/errors';
import { Card } from '@/components/ui';

/** A field's text as the form starts it: the declared default, or empty. */
function initialText(param: ParamSpec): string {
  return param.default === undefined ? '' : String(param.default);
}

/**
 * The issues of a refused trigger by field name (`params.NAME` -> NAME), so each shows under
 * its field; the store's InvalidInputError lists them in `details.issues`.
 */
export function paramIssues(error: unknown): Map<string, string> {
  const issues = error ? describeError(error).details?.issues : undefined;
  const byName = new Map<string, string>();
  if (!Array.isArray(issues)) return byName;
  for (const issue of issues as { field?: unknown; message?: unknown }[]) {
    if (typeof issue.field === 'string' && issue.field.startsWith('params.')) byName.set(issue.field.slice('params.'.length), String(issue.message));
  }
  return byName;
}

/**
 * The trigger form of a DAG that declares params: one field per parameter, made from its
 * declaration (a select for an enum, a checkbox for a boolean, text otherwise, so a number
 * typed wrong reaches the store and comes back as the field's error). An empty field is
 * left out, so the parameter takes its default, or is named as required. The store checks
 * every value; the form decides nothing.
 */
export function TriggerForm(props: {
  declared: Record<string, ParamSpec>;
  pending: boolean;
  error: unknown;
  onSubmit: (params: Record<string, unknown>) => void;
  onCancel: () => void;
}) {
  const names = paramNames(props.declared);
  const [texts, setTexts] = useState<Record<string, string>>(() => Object.fromEntries(names.map((n) => [n, initialText(props.declared[n]!)])));
  const [flags, setFlags] = useState<Record<string, boolean>>(() => Object.fromEntries(names.map((n) => [n, props.declared[n]!.default === true])));
  const issues = paramIssues(props.error);
  const submit = () => {
    const params: Record<string, unknown> = {};
    for (const name of names) {
      const param = props.declared[name]!;
      if (param.type === 'boolean') params[name] = flags[name] ?? false;
      else if (texts[name] !== '') params[name] = paramFromText(param.type, texts[name] ?? '');
    }
    props.onSubmit(params);
  };
  return (
    <Card title="Trigger a run with params">
      <form
        data-testid="trigger-form"
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        {names.map((name) => {
          const param = props.declared[name]!;
          const issue = issues.get(name);
          const label = `${name} (${param.type}${param.required ? ', required' : ''})`;
          return (
            <label className="field" key={name}>
              <span>{label}</span>
              {param.type === 'boolean' ? (
                <input
                  type="checkbox"
                  className="field-check"
                  data-testid={`param-${name}`}
                  checked={flags[name] ?? false}
                  onChange={(e) => setFlags({ ...flags, [name]: e.target.checked })}
                />
              ) : param.enum ? (
                <select data-testid={`param-${name}`} value={texts[name] ?? ''} onChange={(e) => setTexts({ ...texts, [name]: e.target.value })}>
                  {param.default === undefined ? <option value="">(none)</option> : null}
                  {param.enum.map((v) => (
                    <option key={String(v)} value={String(v)}>
                      {String(v)}
                    </option>
                  ))}
                </select>
              ) : (
                <input
                  data-testid={`param-${name}`}
                  inputMode={param.type === 'string' ? 'text' : 'decimal'}
                  value={texts[name] ?? ''}
                  onChange={(e) => setTexts({ ...texts, [name]: e.target.value })}
                />
              )}
              {param.description ? <span>{param.description}</span> : null}
              {issue ? (
                <ul className="field-issues" data-testid={`param-error-${name}`}>
                  <li>{issue}</li>
                </ul>
              ) : null}
            </label>
          );
        })}
        <button className="primary" type="submit" data-testid="trigger-submit" disabled={props.pending}>
          ▶ Queue the run
        </button>{' '}
        <button type="button" onClick={props.onCancel}>
          Cancel
        </button>
      </form>
    </Card>
  );
}
