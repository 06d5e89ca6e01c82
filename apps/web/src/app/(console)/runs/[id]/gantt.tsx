'use client';

import type { RunTimeline, TimelineInterval } from '@fenceline/db/console';
import { formatDuration, formatTime } from '@/components/format';
import { useShownZone } from '@/components/time';
import { plural } from '@/lib/plural';

const MAX_ROWS = 400;

/** What each kind of interval is called in its tooltip. */
const KIND_TEXT: Record<TimelineInterval['kind'], string> = {
  dependencies: 'waiting on dependencies',
  ready: 'ready, waiting for a free slot or under the cap',
  backoff: 'waiting out the retry backoff',
  attempt: 'attempt',
};

const LEGEND: [string, string][] = [
  ['swatch deps', 'dependencies'],
  ['swatch ready', 'ready, waiting for a slot or the cap'],
  ['swatch backoff', 'retry backoff'],
  ['swatch leased', 'leased'],
  ['swatch ok', 'succeeded'],
  ['swatch retrying', 'failed, retried'],
  ['swatch bad', 'failed / expired'],
  ['renewal-tick-legend', 'renewal'],
];

function describe(i: TimelineInterval, ms: number): string {
  const took = `${formatDuration(ms)}${i.open ? ' so far' : ''}`;
  if (i.kind === 'attempt') return `attempt ${i.attempt ?? '?'}: ${i.outcome ?? '?'}, ${took}`;
  return `${KIND_TEXT[i.kind]}: ${took}`;
}

/**
 * One row per job, drawn from the timeline's intervals: waiting on dependencies, ready and
 * waiting for a slot or the cap, each attempt coloured by how it ended, and the backoff
 * before each retry. Every interval is placed by the times the store recorded for it, so a
 * bar is as wide as what it stands for. The axis runs from the run's start to its end (or
 * store time now while it runs).
 */
export function Gantt({ timeline, selected, onSelect }: { timeline: RunTimeline; selected: string | null; onSelect: (taskId: string) => void }) {
  const { run } = timeline;
  const zone = useShownZone();
  const startMs = new Date(run.startedAt ?? run.createdAt).getTime();
  const endMs = Math.max(startMs + 1000, new Date(run.endedAt ?? timeline.now).getTime());
  const span = endMs - startMs;
  const clamp = (ms: number) => Math.min(Math.max(ms - startMs, 0), span);
  const rows = timeline.jobs.slice(0, MAX_ROWS);
  return (
    <div className="gantt" data-testid="gantt" data-start-ms={startMs} data-end-ms={endMs}>
      <div className="gantt-axis">
        <span>0</span>
        <span>{formatDuration(span / 2)}</span>
        <span>{formatDuration(span)}</span>
      </div>
      {rows.map((j) => (
        <div key={j.job.id} className={`gantt-row ${selected === j.job.taskId ? 'selected' : ''}`} onClick={() => onSelect(j.job.taskId)} data-testid={`gantt-row-${j.job.taskId}`}>
          {/* The label is the row's keyboard handle: a real button, so Tab reaches it and Enter or
              Space opens the job's panel, as a click anywhere on the row does. */}
          <button
            type="button"
            className="gantt-label"
            title={j.waitingReason ?? j.job.state}
            aria-pressed={selected === j.job.taskId}
            aria-label={`Open job ${j.job.taskId} (${j.job.state.replace('_', ' ')})`}
            data-testid={`gantt-open-${j.job.taskId}`}
          >
            {j.job.taskId}
          </button>
          <div className="gantt-track">
            {j.intervals.map((i, k) => {
              const fromMs = new Date(i.from).getTime();
              const toMs = new Date(i.to).getTime();
              const kindClass = i.kind === 'attempt' ? `seg-attempt outcome-${i.outcome ?? 'live'}` : i.kind === 'dependencies' ? 'seg-deps' : `seg-${i.kind}`;
              return (
                <div
                  key={k}
                  className={`seg ${kindClass}`}
                  data-testid="gantt-seg"
                  data-kind={i.kind}
                  data-from-ms={fromMs}
                  data-to-ms={toMs}
                  style={{ left: `${(clamp(fromMs) / span) * 100}%`, width: `${((clamp(toMs) - clamp(fromMs)) / span) * 100}%` }}
                  title={describe(i, toMs - fromMs)}
                />
              );
            })}
            {j.attempts.flatMap((a, i) =>
              a.renewals.map((at, k) => (
                <div
                  key={`r${i}-${k}`}
                  className="renewal-tick"
                  data-testid="renewal-tick"
                  style={{ left: `${(clamp(new Date(at).getTime()) / span) * 100}%` }}
                  title={`renewed ${formatTime(at, zone)} (fence ${a.fence})`}
                />
              )),
            )}
          </div>
        </div>
      ))}
      {timeline.jobs.length > MAX_ROWS ? <div className="muted small">and {plural(timeline.jobs.length - MAX_ROWS, 'more job')}</div> : null}
      <div className="legend small">
        {LEGEND.map(([swatch, text]) => (
          // Each swatch stays on the line of its label.
          <span key={text} style={{ whiteSpace: 'nowrap', marginRight: 10 }}>
            <i className={swatch} /> {text}
          </span>
        ))}
      </div>
    </div>
  );
}
