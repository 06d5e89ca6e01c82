'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import { LIVE_MS, useTRPC } from '@/client/trpc';
import { ErrorBox } from '@/components/errors';
import { formatDuration, formatTime } from '@/components/format';
import { useShownZone } from '@/components/time';
import { Card } from '@/components/ui';

/** A run this much slower than the median of its DAG's earlier runs is called out. */
const SLOW_RATIO = 1.5;
const BAR = 14;
const GAP = 4;
const HEIGHT = 60;

/**
 * The run's duration against its DAG's history: "this run 4 min 12 s; median of the last 20
 * succeeded runs 2 min 1 s", and a bar per earlier run with this run's bar last and marked,
 * so a slow run stands out. Each bar is an image named with its run and duration; the
 * dashed line is the median.
 */
export function RunDurationCard({ runId }: { runId: string }) {
  const trpc = useTRPC();
  const q = useQuery(trpc.runs.durations.queryOptions({ runId }, { refetchInterval: (query) => (query.state.error || query.state.data?.run.open === false ? false : LIVE_MS) }));
  const zone = useShownZone();
  const d = q.data;
  if (!d) return q.error ? <ErrorBox error={q.error} what="Reading the run's earlier durations" /> : null;
  const { run, history, medianMs } = d;
  const ratio = run.durationMs !== null && medianMs ? run.durationMs / medianMs : null;
  const slow = ratio !== null && ratio >= SLOW_RATIO;
  const bars = [
    ...history.map((h) => ({ id: h.id, label: `run #${h.id}, ${formatTime(h.scheduledAt, zone)}, took ${formatDuration(h.durationMs)}`, ms: h.durationMs, me: false })),
    ...(run.durationMs !== null ? [{ id: run.id, label: `this run, ${run.open ? 'running for' : 'took'} ${formatDuration(run.durationMs)}`, ms: run.durationMs, me: true }] : []),
  ];
  const max = Math.max(1, ...bars.map((b) => b.ms));
  const y = (ms: number) => HEIGHT - Math.max(2, (ms / max) * (HEIGHT - 4));
  const width = bars.length * (BAR + GAP);
  return (
    <Card title="Duration against earlier runs">
      <p data-testid="run-duration-summary" data-run-ms={run.durationMs ?? ''} data-median-ms={medianMs ?? ''}>
        {run.durationMs === null ? (
          'This run has not started.'
        ) : (
          <>
            This run {run.open ? 'has run for' : 'took'} <strong>{formatDuration(run.durationMs)}</strong>
          </>
        )}
        {medianMs !== null ? (
          <>
            ; median of the last {history.length} succeeded {history.length === 1 ? 'run' : 'runs'}: <strong>{formatDuration(medianMs)}</strong>
            {ratio !== null ? ` (${ratio.toFixed(1)}× the median)` : ''}.
          </>
        ) : (
          '; no earlier run of this DAG succeeded, so there is nothing to compare it with.'
        )}{' '}
        {slow ? (
          <span className="badge state-failed" data-testid="run-slow">
            slower than usual
          </span>
        ) : null}
      </p>
      {bars.length > 0 ? (
        <>
          <svg
            className="duration-bars"
            width={width}
            height={HEIGHT}
            role="group"
            aria-label={`Durations of the last ${history.length} succeeded runs and this run`}
            data-testid="run-duration-chart"
          >
            {bars.map((b, i) => (
              <rect
                key={b.id}
                role="img"
                aria-label={b.label}
                className={b.me ? 'me' : undefined}
                x={i * (BAR + GAP)}
                y={y(b.ms)}
                width={BAR}
                height={HEIGHT - y(b.ms)}
                rx={2}
                data-ms={b.ms}
              >
                <title>{b.label}</title>
              </rect>
            ))}
            {medianMs !== null ? <line className="median" x1={0} x2={width} y1={y(medianMs)} y2={y(medianMs)} /> : null}
          </svg>
          <div className="small muted">
            Bars: earlier succeeded runs, oldest first, then <span className="legend-me">this run</span>; dashed line: the median.
            {history.length > 0 ? (
              <>
                {' '}
                Last earlier run: <Link href={`/runs/${history[history.length - 1]!.id}`}>#{history[history.length - 1]!.id}</Link>.
              </>
            ) : null}
          </div>
        </>
      ) : null}
    </Card>
  );
}
