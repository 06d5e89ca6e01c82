'use client';

import { Card } from '@/components/ui';
import { allowedText, KNOB_RULES, type KnobErrors, type KnobField, type KnobForm } from './knob-form';
import { spanText, type LivenessNotice } from './liveness';

/** The input's id and test id; the cap's predates the field's name. */
export function knobInputId(field: KnobField): string {
  return field === 'capPercent' ? 'sim-knob-cap' : `sim-knob-${field}`;
}

/**
 * The knobs, as text inputs that keep exactly what the user typed (a number input would
 * hide a half-typed "-" or "." from the page), each with its problem shown beneath it.
 */
export function KnobCard({
  form,
  errors,
  onChange,
  livenessMs,
  notice,
  refusal,
}: {
  form: KnobForm;
  errors: KnobErrors;
  onChange: (form: KnobForm) => void;
  /** The healed phase the knobs give, when they are valid. */
  livenessMs: number | null;
  notice: LivenessNotice | null;
  /** Why the last Run or Compare did not start. */
  refusal: string | null;
}) {
  const setText = (field: KnobField, text: string) => onChange({ ...form, text: { ...form.text, [field]: text } });
  const field = (key: KnobField, disabled = false) => {
    const testId = knobInputId(key);
    const rule = KNOB_RULES[key];
    const error = disabled ? undefined : errors[key];
    return (
      <label className="field" key={key}>
        <span>{rule.label}</span>
        <input
          type="text"
          inputMode={rule.kind === 'count' ? 'numeric' : 'decimal'}
          autoComplete="off"
          spellCheck={false}
          value={form.text[key]}
          disabled={disabled}
          title={`${rule.label}: ${allowedText(rule)}`}
          aria-invalid={error ? 'true' : 'false'}
          aria-describedby={error ? `${testId}-error` : undefined}
          style={error ? { borderColor: 'var(--bad)' } : undefined}
          id={testId}
          data-testid={testId}
          onChange={(e) => setText(key, e.target.value)}
        />
        {error ? (
          <span className="inline-error" id={`${testId}-error`} data-testid={`${testId}-error`} role="alert">
            {error}
          </span>
        ) : null}
      </label>
    );
  };
  return (
    <Card title="Scenario: fanout, scaled down">
      <p className="muted small">
        One DAG fans out five-minute jobs three minutes in, while the other DAGs run a one-minute job every 15 minutes. 30 virtual minutes with faults, then{' '}
        <span data-testid="sim-liveness-window">{livenessMs === null ? 'a healed phase' : `${spanText(livenessMs)} healed`}</span> (at least 10 minutes, longer when the fan-out
        needs the time to drain), by the end of which every run created before the faults stopped must be finished (I7). Fault rates are the probability per 10-second tick that
        such a fault starts somewhere.
      </p>
      <div className="field-row">
        {field('workers')}
        {field('capPercent', form.capOff)}
        <label className="field">
          <span>Cap off</span>
          <input type="checkbox" checked={form.capOff} data-testid="sim-knob-cap-off" onChange={(e) => onChange({ ...form, capOff: e.target.checked })} />
        </label>
        {field('lendReserve')}
        {field('fanoutTasks')}
        {field('otherDags')}
        {field('seed')}
      </div>
      <div className="field-row">
        {field('workerPause')}
        {field('workerCrash')}
        {field('leaderCrash')}
        {field('linkCut')}
      </div>
      {refusal ? (
        <p className="inline-error" role="alert" data-testid="sim-knob-refusal">
          {refusal}
        </p>
      ) : null}
      {notice ? (
        <p className={`small ${notice.tone === 'warn' ? 'warn-text' : 'muted'}`} data-testid="sim-liveness-notice" data-tone={notice.tone}>
          {notice.text}
        </p>
      ) : null}
    </Card>
  );
}
