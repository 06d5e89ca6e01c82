'use client';

/** What live workers said they run when they registered (dags.jobTypes). */
export interface JobTypesView {
  liveWorkers: number;
  reporting: number;
  types: string[];
}

const BUILTIN = new Set(['noop', 'sleep', 'shell', 'http']);

/**
 * A line under a palette entry when no live worker would run its type, since a task of that
 * type waits (or fails on a worker without it) however valid the spec. Silent while the
 * answer is unknown: no reply yet, or a live worker that did not say what it runs.
 */
export function PaletteAvailability({ type, types }: { type: string; types: JobTypesView | undefined }) {
  if (!types) return null;
  let warning: string | null = null;
  if (types.liveWorkers === 0) warning = 'no live worker at the moment';
  else if (types.reporting < types.liveWorkers) warning = null;
  else if (type === 'custom') {
    const named = types.types.filter((t) => !BUILTIN.has(t));
    return (
      <span className="muted small" data-testid="palette-named-types">
        {named.length === 0 ? 'no live worker defines a named type' : `live workers define: ${named.join(', ')}`}
      </span>
    );
  } else if (!types.types.includes(type)) {
    warning = type === 'shell' ? 'no live worker runs shell jobs (a worker runs them only with FENCELINE_ALLOW_SHELL=1)' : `no live worker runs ${type} jobs`;
  }
  return warning ? (
    <span className="bad-text small" data-testid={`palette-warning-${type}`}>
      {warning}
    </span>
  ) : null;
}
