'use client';

import { Stat } from '@/components/ui';
import { fanoutFigures, makespanText, progressText } from './fanout-figures';
import type { Knobs, SimRunReport } from './knobs';
import { capLeases } from './report-scales';

/** Seconds as the report rounds them (to a tenth). */
function secondsText(v: number | undefined): string {
  return v === undefined ? '—' : `${v.toLocaleString('en-US', { maximumFractionDigits: 1 })} s`;
}

/**
 * The headline figures. Side by side, the four stats stay on one row in a smaller type, so
 * that the two sides' figures line up for reading across.
 */
export function RunStats({ report: r, knobs, index, compact }: { report: SimRunReport; knobs: Knobs; index: number; compact: boolean }) {
  const ff = fanoutFigures(r.figures);
  const pool = r.size.slots;
  const cap = capLeases(knobs, pool);
  const value = (text: string) => (compact ? <span style={{ fontSize: 19 }}>{text}</span> : text);
  const noOthers = ff.otherJobsStarted === 0;
  return (
    <div className={compact ? 'stats compact' : 'stats'} data-testid={`sim-stats-${index}`}>
      <Stat
        label="Fan-out makespan"
        value={
          <span data-testid={`sim-makespan-${index}`} data-finished={ff.finished ? 'true' : 'false'} style={compact ? { fontSize: 19 } : undefined}>
            {makespanText(ff)}
          </span>
        }
        hint={<span data-testid={`sim-fanout-progress-${index}`}>{progressText(ff)}</span>}
        tone={ff.finished ? undefined : 'warn'}
        testId={`sim-headline-${index}`}
      />
      <Stat
        label="Fan-out peak leases"
        value={value(ff.peakLeases === undefined ? '—' : ff.peakLeases.toLocaleString('en-US'))}
        hint={
          <>
            {cap !== undefined ? `cap ${cap} of ${pool} slots` : `no cap, ${pool} slots`}
            {ff.peakLent !== undefined ? (
              <span data-testid={`sim-lent-${index}`} data-lent={ff.peakLent}>
                ; {ff.peakLent.toLocaleString('en-US')} lent at the peak, reserve {ff.reserveSlots ?? 0}
              </span>
            ) : null}
          </>
        }
        testId={`sim-peak-${index}`}
      />
      <Stat
        label="Other DAGs' start p99"
        value={<span data-testid={`sim-other-latency-${index}`}>{value(noOthers ? 'none' : secondsText(ff.otherP99S))}</span>}
        hint={
          noOthers
            ? knobs.otherDags === 0
              ? 'no other DAGs in this world'
              : 'no other DAG started a job'
            : `max ${secondsText(ff.otherMaxS)} over ${ff.otherJobsStarted.toLocaleString('en-US')} jobs`
        }
        tone={noOthers ? undefined : (ff.otherP99S ?? 0) > 60 ? 'warn' : 'good'}
        testId={`sim-latency-${index}`}
      />
      <Stat
        label="Violations"
        value={
          <span data-testid={`sim-violations-${index}`} style={compact ? { fontSize: 19 } : undefined}>
            {r.violations.length}
          </span>
        }
        hint={`outcome ${r.outcome}${r.crash ? `: ${r.crash.split('\n')[0]}` : ''}`}
        tone={r.violations.length === 0 && r.outcome === 'ok' ? 'good' : 'bad'}
        testId={`sim-outcome-${index}`}
      />
    </div>
  );
}
