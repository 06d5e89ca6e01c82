'use client';

import { setZoneChoice, useZoneChoice, type ZoneChoice } from './time';

const CHOICES: { value: ZoneChoice; label: string; testId: string }[] = [
  { value: 'local', label: 'Local', testId: 'zone-local' },
  { value: 'UTC', label: 'UTC', testId: 'zone-utc' },
];

/** Which zone every time in the console is shown in; remembered in the browser. */
export function ZoneSwitch() {
  const choice = useZoneChoice();
  return (
    <div className="zone-switch" role="group" aria-label="Show times in" data-testid="zone-switch" data-choice={choice}>
      <span className="muted small">Times</span>
      <span className="segmented">
        {CHOICES.map((c) => (
          <button key={c.value} type="button" className="small" aria-pressed={choice === c.value} data-testid={c.testId} onClick={() => setZoneChoice(c.value)}>
            {c.label}
          </button>
        ))}
      </span>
    </div>
  );
}
