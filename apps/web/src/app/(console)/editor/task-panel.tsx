'use client';

import { useEffect, useState } from 'react';
import { TRIGGER_RULES, type DagIssue } from '@fenceline/core';
import type { DraftTask } from './draft';

const BUILTIN = ['noop', 'sleep', 'shell', 'http'];

/** What each trigger rule means, in the words the selector shows. */
const RULE_TEXT: Record<(typeof TRIGGER_RULES)[number], string> = {
  all_success: 'all succeeded (default)',
  all_done: 'all ended, however (clean-up)',
  none_failed: 'all ended, none failed',
  one_failed: 'as soon as one failed (alerting)',
  one_success: 'as soon as one succeeded',
};

function IssueList({ issues, field }: { issues: DagIssue[]; field?: (path: string) => boolean }) {
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

/** One task's settings, with the validator's messages shown under the field they are about. */
export function TaskPanel({
  task,
  index,
  allIds,
  issues,
  onChange,
  onRename,
  onDelete,
}: {
  task: DraftTask;
  index: number;
  allIds: string[];
  issues: DagIssue[];
  onChange: (next: DraftTask) => void;
  onRename: (to: string) => void;
  onDelete: () => void;
}) {
  const [id, setId] = useState(task.id);
  // The panel stays mounted through a rename (see the editor's panel keys), so an id changed
  // from outside the field (undo, the JSON view) is taken over here.
  useEffect(() => setId(task.id), [task.id]);
  const [configText, setConfigText] = useState(() => JSON.stringify(task.config, null, 2));
  const [configError, setConfigError] = useState<string | null>(null);
  const at = `tasks.${index}`;
  const renameError = id !== task.id && allIds.includes(id) ? `another task is already called "${id}"` : null;
  const commitRename = () => {
    if (id !== task.id && id.trim() !== '' && !renameError) onRename(id.trim());
  };
  const numberField = (name: 'retries' | 'timeoutMs' | 'priority', label: string) => (
    <label className="field">
      <span>{label}</span>
      <input
        type="number"
        data-testid={`task-${name}`}
        value={typeof task[name] === 'number' ? (task[name] as number) : ''}
        placeholder="default"
        onChange={(e) => onChange({ ...task, [name]: e.target.value === '' ? undefined : Number(e.target.value) })}
      />
      <IssueList issues={issues} field={(p) => p === `${at}.${name}`} />
    </label>
  );
  return (
    <div className="panel" data-testid="task-panel">
      <div className="panel-head">
        <h3>Task</h3>
        <button className="danger small" onClick={onDelete} data-testid="delete-task">
          Delete
        </button>
      </div>
      <label className="field">
        <span>Id</span>
        <input
          data-testid="task-id"
          value={id}
          onChange={(e) => setId(e.target.value)}
          onBlur={commitRename}
          onKeyDown={(e) => {
            if (e.key === 'Enter') commitRename();
          }}
        />
        {renameError ? <div className="inline-error">{renameError}</div> : null}
        <IssueList issues={issues} field={(p) => p === `${at}.id`} />
      </label>
      <label className="field">
        <span>Type</span>
        <input data-testid="task-type" list="job-types" value={task.type} onChange={(e) => onChange({ ...task, type: e.target.value })} />
        <datalist id="job-types">
          {BUILTIN.map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <IssueList issues={issues} field={(p) => p === `${at}.type`} />
      </label>
      <label className="field">
        <span>Config (JSON{BUILTIN.includes(task.type) ? `, checked against the ${task.type} schema` : ''})</span>
        <textarea
          className="json small"
          data-testid="task-config"
          spellCheck={false}
          rows={6}
          value={configText}
          onChange={(e) => {
            setConfigText(e.target.value);
            try {
              const value: unknown = JSON.parse(e.target.value);
              if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error('config must be a JSON object');
              setConfigError(null);
              onChange({ ...task, config: value as Record<string, unknown> });
            } catch (err) {
              setConfigError((err as Error).message);
            }
          }}
        />
        {configError ? <div className="inline-error">{configError}</div> : null}
        <IssueList issues={issues} field={(p) => p.startsWith(`${at}.config`)} />
      </label>
      <div className="field">
        <span>Depends on</span>
        {task.dependsOn.length === 0 ? <div className="muted small">nothing: it starts as soon as a run starts</div> : null}
        <ul className="deps">
          {task.dependsOn.map((d) => (
            <li key={d} className={allIds.includes(d) ? '' : 'bad-text'}>
              <code>{d}</code> {allIds.includes(d) ? null : '(unknown task)'}
              <button className="link small" onClick={() => onChange({ ...task, dependsOn: task.dependsOn.filter((x) => x !== d) })}>
                remove
              </button>
            </li>
          ))}
        </ul>
        <IssueList issues={issues} field={(p) => p.startsWith(`${at}.dependsOn`)} />
      </div>
      <label className="field">
        <span>Runs when its dependencies</span>
        <select
          data-testid="task-trigger"
          value={typeof task.trigger === 'string' ? task.trigger : 'all_success'}
          onChange={(e) => {
            const { trigger: _old, ...rest } = task;
            onChange(e.target.value === 'all_success' ? (rest as DraftTask) : { ...rest, trigger: e.target.value });
          }}
        >
          {TRIGGER_RULES.map((r) => (
            <option key={r} value={r}>
              {r}: {RULE_TEXT[r]}
            </option>
          ))}
        </select>
        {task.dependsOn.length === 0 && typeof task.trigger === 'string' && task.trigger !== 'all_success' ? (
          <div className="muted small">A task without dependencies runs at once, whatever its rule.</div>
        ) : null}
        <IssueList issues={issues} field={(p) => p === `${at}.trigger`} />
      </label>
      <div className="field-row">
        {numberField('retries', 'Retries')}
        {numberField('timeoutMs', 'Timeout (ms)')}
        {numberField('priority', 'Priority')}
      </div>
    </div>
  );
}
