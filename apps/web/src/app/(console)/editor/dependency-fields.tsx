'use client';

import { TRIGGER_RULES, type DagIssue } from '@fenceline/core';
import type { DraftTask } from './draft';
import { IssueList } from './issue-list';

// The fields of a task's panel about its dependencies: what it depends on, and when it runs after them.

/** What each trigger rule means, in the words the selector shows. */
const RULE_TEXT: Record<(typeof TRIGGER_RULES)[number], string> = {
  all_success: 'all succeeded (default)',
  all_done: 'all ended, however (clean-up)',
  none_failed: 'all ended, none failed',
  one_failed: 'as soon as one failed (alerting)',
  one_success: 'as soon as one succeeded',
};

/**
 * Adds a dependency by choosing it from a list, so one can be drawn without dragging an edge
 * on the canvas: with the keyboard, a screen reader or a touch screen. Choosing a task adds it
 * at once and the list goes back to its prompt; a cycle this makes is shown by the validator
 * as one drawn by hand is.
 */
function AddDependency({ task, allIds, onAdd }: { task: DraftTask; allIds: string[]; onAdd: (dep: string) => void }) {
  const choices = allIds.filter((id) => id !== task.id && !task.dependsOn.includes(id));
  return (
    <label className="small add-dependency">
      <span>Add a dependency</span>{' '}
      <select data-testid="add-dependency" value="" disabled={choices.length === 0} onChange={(e) => e.target.value !== '' && onAdd(e.target.value)}>
        <option value="">{choices.length === 0 ? 'no other task to depend on' : 'choose a task…'}</option>
        {choices.map((id) => (
          <option key={id} value={id}>
            {id}
          </option>
        ))}
      </select>
    </label>
  );
}

/** The tasks this one depends on, each with a remove button, the list to add another, and the validator's word on them. */
export function DependsOnField({ task, allIds, issues, at, onChange }: { task: DraftTask; allIds: string[]; issues: DagIssue[]; at: string; onChange: (next: DraftTask) => void }) {
  return (
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
      <AddDependency task={task} allIds={allIds} onAdd={(dep) => onChange({ ...task, dependsOn: [...task.dependsOn, dep] })} />
      <IssueList issues={issues} field={(p) => p.startsWith(`${at}.dependsOn`)} />
    </div>
  );
}

/** The task's trigger rule: when it runs, given how its dependencies ended. */
export function TriggerRuleField({ task, issues, at, onChange }: { task: DraftTask; issues: DagIssue[]; at: string; onChange: (next: DraftTask) => void }) {
  return (
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
  );
}
