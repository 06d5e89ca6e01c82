import { formatDuration } from './format';

/** The median of the values given (the mean of the middle two for an even count); null for none. */
export function medianOf(values: readonly number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * A task's durations over the runs the grid shows, oldest on the left as in the grid, as a
 * line: a gap where a run has no timed job, the latest point marked. Its accessible name
 * gives the figures the line draws (fewest, median, most and latest), and the latest is
 * also written beside it.
 */
export function DurationSparkline({ values, what, testId }: { values: readonly (number | null)[]; what: string; testId?: string }) {
  const timed = values.filter((v): v is number => v !== null);
  if (timed.length === 0) return <span className="muted small">–</span>;
  const width = 72;
  const height = 18;
  const max = Math.max(...timed, 1);
  const step = values.length > 1 ? (width - 4) / (values.length - 1) : 0;
  const x = (i: number) => 2 + i * step;
  const y = (v: number) => height - 2 - (v / max) * (height - 4);
  // One polyline per unbroken stretch of timed runs.
  const lines: string[] = [];
  let current: string[] = [];
  values.forEach((v, i) => {
    if (v === null) {
      if (current.length > 0) lines.push(current.join(' '));
      current = [];
    } else current.push(`${x(i).toFixed(1)},${y(v).toFixed(1)}`);
  });
  if (current.length > 0) lines.push(current.join(' '));
  const lastIndex = values.findLastIndex((v) => v !== null);
  const latest = values[lastIndex]!;
  const label = `${what}: durations over ${values.length} runs, fewest ${formatDuration(Math.min(...timed))}, median ${formatDuration(medianOf(timed))}, most ${formatDuration(max)}, latest ${formatDuration(latest)}`;
  return (
    <span className="sparkline" data-testid={testId} data-latest-ms={latest} data-max-ms={max}>
      <svg width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label}>
        <title>{label}</title>
        {lines.map((points, i) => (points.includes(' ') ? <polyline key={i} points={points} /> : <circle key={i} cx={points.split(',')[0]} cy={points.split(',')[1]} r={1.5} />))}
        <circle className="latest" cx={x(lastIndex)} cy={y(latest)} r={2.5} />
      </svg>
      <span className="small muted" aria-hidden="true">
        {formatDuration(latest)}
      </span>
    </span>
  );
}
