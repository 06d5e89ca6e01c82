'use client';

import type { RunTimeline } from '@fenceline/db/console';
import { formatDuration } from '@/components/format';

const MAX_ROWS = 400;

/**
 * One row per job: the time before it became ready (dependencies), the time it sat ready
 * (waiting for a slot or the cap), then one bar per lease coloured by how it ended. The
 * axis runs from the run's start to its end (or store time now while it runs).
 */
export function Gantt({ timeline, selected, onSelect }: { timeline: RunTimeline; selected: string | null; onSelect: (taskId: string) => void }) {
  const { run } = timeline;
  const startMs = new Date(run.startedAt ?? run.createdAt).getTime();
  const endMs = Math.max(startMs + 1000, new Date(run.endedAt ?? timeline.now).getTime());
  const span = endMs - startMs;
  const pos = (at: Date | string | null | undefined, fallback: number) => {
    const ms = at ? new Date(at).getTime() : fallback;
    return `${(Math.min(Math.max(ms - startMs, 0), span) / span) * 100}%`;
  };
  const width = (from: Date | string | null | undefined, to: Date | string | null | undefined) => {
    const a = from ? new Date(from).getTime() : startMs;
    const b = to ? new Date(to).getTime() : endMs;
    return `${(Math.max(0, Math.min(b, endMs) - Math.max(a, startMs)) / span) * 100}%`;
  };
  const rows = timeline.jobs.slice(0, MAX_ROWS);
  return (
    <div className="gantt" data-testid="gantt">
      <div className="gantt-axis">
        <span>0</span>
        <span>{formatDuration(span / 2)}</span>
        <span>{formatDuration(span)}</span>
      </div>
      {rows.map((j) => {
        const firstGrant = j.attempts[0]?.grantedAt ?? null;
        return (
          <div key={j.job.id} className={`gantt-row ${selected === j.job.taskId ? 'selected' : ''}`} onClick={() => onSelect(j.job.taskId)} data-testid={`gantt-row-${j.job.taskId}`}>
            <div className="gantt-label" title={j.waitingReason ?? j.job.state}>
              {j.job.taskId}
            </div>
            <div className="gantt-track">
              {j.job.readyAt ? <div className="seg seg-deps" style={{ left: '0%', width: width(null, j.job.readyAt) }} title="waiting on dependencies" /> : <div className="seg seg-deps" style={{ left: '0%', width: '100%' }} title="waiting on dependencies" />}
              {j.job.readyAt ? (
                <div className="seg seg-ready" style={{ left: pos(j.job.readyAt, startMs), width: width(j.job.readyAt, firstGrant ?? (j.job.endedAt ?? null)) }} title="ready: waiting for a free slot or under the cap" />
              ) : null}
              {j.attempts.map((a, i) => (
                <div
                  key={i}
                  className={`seg seg-attempt outcome-${a.outcome}`}
                  style={{ left: pos(a.grantedAt, startMs), width: width(a.grantedAt, a.endedAt) }}
                  title={`attempt ${a.attempt}: ${a.workerId ?? '?'} fence ${a.fence}, ${a.outcome}${a.error ? `: ${a.error}` : ''}, ${a.renewals.length} renewal(s)`}
                />
              ))}
              {j.attempts.flatMap((a, i) =>
                a.renewals.map((at, k) => (
                  <div key={`r${i}-${k}`} className="renewal-tick" data-testid="renewal-tick" style={{ left: pos(at, startMs) }} title={`renewed ${at.toISOString()} (fence ${a.fence})`} />
                )),
              )}
            </div>
          </div>
        );
      })}
      {timeline.jobs.length > MAX_ROWS ? <div className="muted small">and {timeline.jobs.length - MAX_ROWS} more jobs</div> : null}
      <div className="legend small">
        <i className="swatch deps" /> dependencies <i className="swatch ready" /> ready, waiting for a slot or the cap <i className="swatch leased" /> leased <i className="swatch ok" /> succeeded <i className="swatch bad" /> failed / expired <i className="renewal-tick-legend" /> renewal
      </div>
    </div>
  );
}
