'use client';

/**
 * Small SVG charts drawn by hand: the console needs two chart shapes, and a charting
 * library would cost more bundle than both together.
 */

export function BarChart({ values, secondary, labels, height = 90, testId }: { values: number[]; secondary?: number[]; labels?: string[]; height?: number; testId?: string }) {
  const max = Math.max(1, ...values.map((v, i) => v + (secondary?.[i] ?? 0)));
  const width = 600;
  const bar = width / Math.max(values.length, 1);
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" data-testid={testId}>
      {values.map((v, i) => {
        const h = (v / max) * (height - 4);
        const s = ((secondary?.[i] ?? 0) / max) * (height - 4);
        return (
          <g key={i}>
            <title>{`${labels?.[i] ?? ''} ${v}${secondary ? ` ok, ${secondary[i]} failed` : ''}`}</title>
            <rect x={i * bar + 1} y={height - h} width={bar - 2} height={h} className="bar" rx={1.5} />
            {s > 0 ? <rect x={i * bar + 1} y={height - h - s} width={bar - 2} height={s} className="bar bad" rx={1.5} /> : null}
          </g>
        );
      })}
    </svg>
  );
}

const PALETTE = ['#4f8cff', '#f59e0b', '#10b981', '#e15b8a', '#8b5cf6', '#06b6d4', '#84cc16', '#f97316'];

export function seriesColor(i: number): string {
  return PALETTE[i % PALETTE.length]!;
}

export function LineChart({ series, capLine, height = 160, testId }: { series: { name: string; values: number[] }[]; capLine?: number; height?: number; testId?: string }) {
  const width = 600;
  const points = Math.max(1, ...series.map((s) => s.values.length));
  const max = Math.max(1, capLine ?? 0, ...series.flatMap((s) => s.values)) * 1.1;
  const x = (i: number) => (points <= 1 ? 0 : (i / (points - 1)) * width);
  const y = (v: number) => height - (v / max) * height;
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" data-testid={testId}>
      {capLine !== undefined ? (
        <g>
          <line x1={0} x2={width} y1={y(capLine)} y2={y(capLine)} className="cap-line" />
          <text x={width - 4} y={y(capLine) - 4} textAnchor="end" className="cap-label">
            cap {capLine}
          </text>
        </g>
      ) : null}
      {series.map((s, si) => (
        <polyline
          key={s.name}
          fill="none"
          stroke={seriesColor(si)}
          strokeWidth={2}
          vectorEffect="non-scaling-stroke"
          points={s.values.map((v, i) => `${x(i)},${y(v)}`).join(' ')}
        />
      ))}
    </svg>
  );
}

export function Meter({ value, max, testId }: { value: number; max: number; testId?: string }) {
  const fraction = max > 0 ? Math.min(1, value / max) : 0;
  return (
    <div className="meter" data-testid={testId} title={`${value} of ${max}`}>
      <div className={`meter-fill ${value >= max && max > 0 ? 'full' : ''}`} style={{ width: `${fraction * 100}%` }} />
    </div>
  );
}
