'use client';

import { SHOWN_STATES, type ShownState } from '@/lib/shown-states';

const LABEL: Record<ShownState, string> = {
  none: 'not created yet',
  waiting: 'waiting on upstream',
  ready: 'ready',
  leased: 'leased (running)',
  succeeded: 'succeeded',
  failed: 'failed',
  upstream_failed: 'upstream failed',
  cancelled: 'cancelled',
  skipped: 'skipped (rule not met)',
};

/** The colours, with how many of the run's tasks are in each state at the moment shown. */
export function ReplayLegend({ counts, index }: { counts: number[]; index: number }) {
  return (
    <div className="legend small" data-testid={`replay-legend-${index}`}>
      {SHOWN_STATES.map((s, i) =>
        // The simulator never cancels a job; its colour would only be noise.
        s === 'cancelled' && !counts[i] ? null : (
          <span key={s} data-state={s} data-count={counts[i] ?? 0}>
            <i className={`dot state-${s}`} /> {LABEL[s]} <strong>{(counts[i] ?? 0).toLocaleString('en-US')}</strong>
          </span>
        ),
      )}
    </div>
  );
}
