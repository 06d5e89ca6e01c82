'use client';

import type { DagIssue } from '@fenceline/core';
import type { DraftSpec } from './draft';

type Schedule = { kind: 'manual' } | { kind: 'cron'; cron: string; timezone?: string } | { kind: 'interval'; everyMs: number };

/**
 * What each catch-up policy does. The panel is 320 px wide, too narrow for a sentence inside
 * a select, so the select holds the policy's name and the sentence shows beneath it.
 */
const CATCHUP: Record<string, string> = {
  none: 'Skips missed slots.',
  latest: 'Runs the most recent missed slot.',
  all: 'Runs every missed slot in the window.',
};

/** The DAG's own settings (shown when no task is selected), with their validation inline. */
export function DagPanel({ spec, issues, onChange }: { spec: DraftSpec; issues: DagIssue[]; onChange: (next: DraftSpec) => void }) {
  const schedule = (spec.schedule ?? { kind: 'manual' }) as Schedule;
  const catchup = (spec.catchup ?? {}) as { policy?: string; windowMs?: number };
  const policy = catchup.policy ?? 'latest';
  const issuesAt = (prefix: string) => issues.filter((i) => i.path === prefix || i.path.startsWith(`${prefix}.`));
  const Issues = ({ prefix }: { prefix: string }) => {
    const list = issuesAt(prefix);
    return list.length ? (
      <ul className="field-issues">
        {list.map((i, k) => (
          <li key={k}>{i.message}</li>
        ))}
      </ul>
    ) : null;
  };
  return (
    <div className="panel" data-testid="dag-panel">
      <h3>DAG</h3>
      <label className="field">
        <span>Id</span>
        <input data-testid="dag-id" value={spec.id} onChange={(e) => onChange({ ...spec, id: e.target.value })} />
        <Issues prefix="id" />
      </label>
      <label className="field">
        <span>Name</span>
        <input data-testid="dag-name" value={typeof spec.name === 'string' ? spec.name : ''} onChange={(e) => onChange({ ...spec, name: e.target.value || undefined })} />
      </label>
      <label className="field">
        <span>Schedule</span>
        <select
          data-testid="schedule-kind"
          value={schedule.kind}
          onChange={(e) => {
            const kind = e.target.value;
            const next: Schedule =
              kind === 'cron' ? { kind: 'cron', cron: '0 * * * *', timezone: 'UTC' } : kind === 'interval' ? { kind: 'interval', everyMs: 60_000 } : { kind: 'manual' };
            onChange({ ...spec, schedule: next });
          }}
        >
          <option value="manual">manual (trigger only)</option>
          <option value="cron">cron</option>
          <option value="interval">interval</option>
        </select>
      </label>
      {schedule.kind === 'cron' ? (
        <div className="field-row">
          <label className="field">
            <span>Cron</span>
            <input data-testid="schedule-cron" value={schedule.cron} onChange={(e) => onChange({ ...spec, schedule: { ...schedule, cron: e.target.value } })} />
          </label>
          <label className="field">
            <span>Time zone</span>
            <input value={schedule.timezone ?? 'UTC'} onChange={(e) => onChange({ ...spec, schedule: { ...schedule, timezone: e.target.value } })} />
          </label>
        </div>
      ) : null}
      {schedule.kind === 'interval' ? (
        <label className="field">
          <span>Every (ms)</span>
          <input type="number" value={schedule.everyMs} onChange={(e) => onChange({ ...spec, schedule: { ...schedule, everyMs: Number(e.target.value) } })} />
        </label>
      ) : null}
      <Issues prefix="schedule" />
      <label className="field">
        <span>Catch-up after an outage</span>
        <select data-testid="catchup-select" value={policy} onChange={(e) => onChange({ ...spec, catchup: { ...catchup, policy: e.target.value } })}>
          {Object.keys(CATCHUP).map((p) => (
            <option key={p} value={p} title={CATCHUP[p]}>
              {p}
            </option>
          ))}
        </select>
        {CATCHUP[policy] ? (
          <span className="muted small" data-testid="catchup-meaning">
            {CATCHUP[policy]}
          </span>
        ) : null}
        <Issues prefix="catchup" />
      </label>
      <div className="field-row">
        <label className="field">
          <span>Max active runs</span>
          <input
            type="number"
            value={typeof spec.maxActiveRuns === 'number' ? spec.maxActiveRuns : ''}
            placeholder="1"
            onChange={(e) => onChange({ ...spec, maxActiveRuns: e.target.value === '' ? undefined : Number(e.target.value) })}
          />
          <Issues prefix="maxActiveRuns" />
        </label>
        <label className="field">
          <span>Own cap (fraction)</span>
          <input
            type="number"
            step="0.05"
            value={typeof spec.capFraction === 'number' ? spec.capFraction : ''}
            placeholder="cluster"
            onChange={(e) => onChange({ ...spec, capFraction: e.target.value === '' ? undefined : Number(e.target.value) })}
          />
          <Issues prefix="capFraction" />
        </label>
      </div>
      <p className="muted small">Select a task to edit it. Issues that concern the whole DAG show here and below.</p>
      <Issues prefix="tasks" />
    </div>
  );
}
