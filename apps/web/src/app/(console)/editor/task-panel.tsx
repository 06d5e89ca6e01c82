'use client';

import { useEffect, useState } from 'react';
import type { DagIssue } from '@fenceline/core';
import type { PoolSummary } from '@fenceline/db/console';
import type { DraftTask } from './draft';
import { labelsOf, labelsText, parseResources, resourcesText, withField } from './task-fields';
import type { RoutingWarning } from './routing-warnings';
import { DependsOnField, TriggerRuleField } from './dependency-fields';
import { IssueList } from './issue-list';

const BUILTIN = ['noop', 'sleep', 'shell', 'http'];

/** One task's settings, with the validator's messages shown under the field they are about. */
export function TaskPanel({
  task,
  index,
  allIds,
  issues,
  warnings,
  pools,
  limits,
  onChange,
  onRename,
  onDelete,
}: {
  task: DraftTask;
  index: number;
  allIds: string[];
  issues: DagIssue[];
  warnings: RoutingWarning[];
  pools: PoolSummary[] | undefined;
  limits: { name: string }[] | undefined;
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
  // Labels and resources are edited as text and kept while typed; the draft takes what they parse to.
  const [labels, setLabels] = useState(() => labelsText(task.labels));
  const [resources, setResources] = useState(() => resourcesText(task.resources));
  const [resourcesError, setResourcesError] = useState<string | null>(null);
  // A change from outside the field (undo, the JSON view) is taken over; the field's own edits, which already read as the task's value, keep what is typed.
  useEffect(() => setLabels((typed) => (labelsText(labelsOf(typed)) === labelsText(task.labels) ? typed : labelsText(task.labels))), [task.labels]);
  useEffect(
    () => setResources((typed) => (resourcesText(parseResources(typed).value) === resourcesText(task.resources) ? typed : resourcesText(task.resources))),
    [task.resources],
  );
  const poolLabels = [...new Set((pools ?? []).filter((p) => p.pool === (typeof task.pool === 'string' ? task.pool : 'default')).flatMap((p) => p.labels))];
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
          {[...new Set([...BUILTIN, ...(pools ?? []).flatMap((p) => p.types)])].map((t) => (
            <option key={t} value={t} />
          ))}
        </datalist>
        <IssueList issues={issues} field={(p) => p === `${at}.type`} />
      </label>
      <label className="field">
        <span>Pool</span>
        <input
          data-testid="task-pool"
          list="live-pools"
          value={typeof task.pool === 'string' ? task.pool : ''}
          placeholder="default"
          onChange={(e) => onChange(withField(task, 'pool', e.target.value.trim() === '' ? undefined : e.target.value.trim()))}
        />
        <datalist id="live-pools">
          {(pools ?? []).map((p) => (
            <option key={p.pool} value={p.pool}>
              {p.liveWorkers} live, {p.slots} slots
            </option>
          ))}
        </datalist>
        <IssueList issues={issues} field={(p) => p === `${at}.pool`} />
      </label>
      <label className="field">
        <span>Labels its worker needs (comma-separated{poolLabels.length > 0 ? `; live in this pool: ${poolLabels.join(', ')}` : ''})</span>
        <input
          data-testid="task-labels"
          value={labels}
          placeholder="gpu, region=eu"
          onChange={(e) => {
            setLabels(e.target.value);
            const list = labelsOf(e.target.value);
            onChange(withField(task, 'labels', list));
          }}
        />
        <IssueList issues={issues} field={(p) => p.startsWith(`${at}.labels`)} />
      </label>
      <label className="field">
        <span>Resources (limit=units, comma-separated{limits && limits.length > 0 ? `; limits: ${limits.map((l) => l.name).join(', ')}` : ''})</span>
        <input
          data-testid="task-resources"
          value={resources}
          placeholder="warehouse=1"
          onChange={(e) => {
            setResources(e.target.value);
            const parsed = parseResources(e.target.value);
            setResourcesError(parsed.error);
            if (parsed.error === null) onChange(withField(task, 'resources', parsed.value));
          }}
        />
        {resourcesError ? <div className="inline-error">{resourcesError}</div> : null}
        <IssueList issues={issues} field={(p) => p.startsWith(`${at}.resources`)} />
      </label>
      {warnings.length > 0 ? (
        <ul className="field-issues warn-text" data-testid="task-warnings">
          {warnings.map((w, k) => (
            <li key={k}>{w.message}</li>
          ))}
        </ul>
      ) : null}
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
      <DependsOnField task={task} allIds={allIds} issues={issues} at={at} onChange={onChange} />
      <TriggerRuleField task={task} issues={issues} at={at} onChange={onChange} />
      <div className="field-row">
        {numberField('retries', 'Retries')}
        {numberField('timeoutMs', 'Timeout (ms)')}
        {numberField('priority', 'Priority')}
      </div>
    </div>
  );
}
