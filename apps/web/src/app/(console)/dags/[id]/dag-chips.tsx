'use client';

import { relative, scheduleZone } from '@/components/format';
import { Time } from '@/components/time';

export type CatchupPolicy = 'none' | 'latest' | 'all';

/** What the chips read of a DAG: whether it is paused, its next run, and the settings of its spec they show. */
export interface ChipsDag {
  paused: boolean;
  nextRunAt: Date | null;
  version: number;
  spec: { schedule: { kind: string; timezone?: string }; maxActiveRuns: number; capFraction?: number; catchup: { policy: CatchupPolicy } };
}

/**
 * The line under a DAG's header: paused or active, when its next run is due (in the zone of
 * its cron), its run and cap settings, and its catch-up policy, which an operator changes here.
 */
export function DagChips({
  dag,
  now,
  canChange,
  onCatchup,
}: {
  dag: ChipsDag;
  now: Date;
  /** Whether the catch-up select takes a change: the user operates and no change is out. */
  canChange: boolean;
  onCatchup: (policy: CatchupPolicy) => void;
}) {
  return (
    <div className="chips">
      {dag.paused ? (
        <span className="badge state-paused" data-testid="paused-badge">
          paused
        </span>
      ) : (
        <span className="badge state-succeeded">active</span>
      )}
      <span className="chip">
        next run:{' '}
        {dag.paused ? (
          <span data-testid="next-run-paused">paused</span>
        ) : dag.nextRunAt ? (
          <>
            <Time at={dag.nextRunAt} zone={scheduleZone(dag.spec.schedule)} testId="next-run" /> ({relative(dag.nextRunAt, now)})
          </>
        ) : (
          'manual only'
        )}
      </span>
      <span className="chip">max active runs: {dag.spec.maxActiveRuns}</span>
      <span className="chip">cap: {dag.spec.capFraction !== undefined ? `${dag.spec.capFraction * 100}% (own)` : 'cluster default'}</span>
      <label className="chip">
        catch-up:{' '}
        <select data-testid="catchup-policy" value={dag.spec.catchup.policy} disabled={!canChange} onChange={(e) => onCatchup(e.target.value as CatchupPolicy)}>
          <option value="none">none</option>
          <option value="latest">latest</option>
          <option value="all">all</option>
        </select>
      </label>
    </div>
  );
}
