'use client';

import { useEffect, useRef, useState, type ReactNode, type RefObject } from 'react';

/**
 * Small SVG charts drawn by hand: the console needs a few chart shapes, and a charting
 * library would cost more bundle than all of them together. Charts with axes are drawn at
 * their measured width in pixels, so tick labels keep their size however wide the card is.
 */

export function BarChart({
  values,
  secondary,
  labels,
  height = 90,
  testId,
  label,
}: {
  values: number[];
  secondary?: number[];
  labels?: string[];
  height?: number;
  testId?: string;
  /** What the chart shows, as its accessible name. */
  label: string;
}) {
  const max = Math.max(1, ...values.map((v, i) => v + (secondary?.[i] ?? 0)));
  const width = 600;
  const bar = width / Math.max(values.length, 1);
  return (
    <svg className="chart" viewBox={`0 0 ${width} ${height}`} preserveAspectRatio="none" role="img" aria-label={label} data-testid={testId}>
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

/**
 * Tick values from 0 to at least `max`, a step of 1, 2 or 5 times a power of ten apart.
 * With `integer` the step is at least 1, for counts. The last tick is the axis's top, so
 * two charts given the same `max` get the same scale.
 */
export function niceTicks(max: number, { target = 5, integer = false }: { target?: number; integer?: boolean } = {}): number[] {
  const top = Number.isFinite(max) && max > 0 ? max : 1;
  const raw = top / target;
  const power = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw - 1e-12) ?? 10 * power;
  if (integer) step = Math.max(1, Math.round(step));
  const n = Math.max(1, Math.ceil(top / step - 1e-9));
  return Array.from({ length: n + 1 }, (_, i) => Number((i * step).toPrecision(12)));
}

export function tickText(v: number): string {
  return v.toLocaleString('en-US', { maximumFractionDigits: 2 });
}

/** The width its box is laid out at, following resizes; `fallback` until it has been measured. */
export function useChartWidth(fallback = 600): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement | null>(null);
  const [width, setWidth] = useState(fallback);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const measure = () => setWidth(Math.max(200, Math.floor(el.getBoundingClientRect().width)));
    measure();
    const observer = new ResizeObserver(measure);
    observer.observe(el);
    return () => observer.disconnect();
  }, []);
  return [ref, width];
}

/** Where a chart draws inside its SVG: the plot area, with the axes' labels around it. */
export interface PlotArea {
  left: number;
  top: number;
  width: number;
  height: number;
}

export const MARKER_ROOM_PX = 16;

export const AXIS_TEXT = { fill: 'var(--muted)', fontSize: 11 } as const;
// CSS variables work in style, not in SVG presentation attributes, so theme colours go there.
const GRID = { style: { stroke: 'var(--border)' }, strokeWidth: 1 } as const;

/** Room left of the plot for the y axis's tick labels (about 6.5 px a character at 11 px) and its rotated title. */
export function yAxisRoom(labels: string[], titled: boolean): number {
  return Math.ceil(Math.max(1, ...labels.map((l) => l.length)) * 6.5) + 10 + (titled ? 20 : 0);
}

/** A horizontal axis under the plot: ticks, their values and what they measure. */
export function XAxis({ area, ticks, at, label }: { area: PlotArea; ticks: number[]; at: (v: number) => number; label: string }) {
  const bottom = area.top + area.height;
  return (
    <g data-axis="x">
      <line x1={area.left} x2={area.left + area.width} y1={bottom} y2={bottom} {...GRID} />
      {ticks.map((t) => (
        <g key={t}>
          <line x1={at(t)} x2={at(t)} y1={bottom} y2={bottom + 4} {...GRID} />
          <text x={at(t)} y={bottom + 15} textAnchor="middle" style={AXIS_TEXT}>
            {tickText(t)}
          </text>
        </g>
      ))}
      <text x={area.left + area.width / 2} y={bottom + 30} textAnchor="middle" style={AXIS_TEXT}>
        {label}
      </text>
    </g>
  );
}

/** A vertical axis left of the plot, with a faint grid line at each tick. */
export function YAxis({
  area,
  ticks,
  at,
  label,
  format = tickText,
}: {
  area: PlotArea;
  ticks: number[];
  at: (v: number) => number;
  label?: string;
  format?: (v: number) => string;
}) {
  return (
    <g data-axis="y">
      {ticks.map((t) => (
        <g key={t}>
          <line x1={area.left} x2={area.left + area.width} y1={at(t)} y2={at(t)} strokeWidth={1} style={{ stroke: 'var(--border)', strokeOpacity: t === 0 ? 1 : 0.6 }} />
          <text x={area.left - 6} y={at(t) + 4} textAnchor="end" style={AXIS_TEXT}>
            {format(t)}
          </text>
        </g>
      ))}
      {label ? (
        <text x={12} y={area.top + area.height / 2} textAnchor="middle" transform={`rotate(-90 12 ${area.top + area.height / 2})`} style={AXIS_TEXT}>
          {label}
        </text>
      ) : null}
    </g>
  );
}

/** A dashed vertical line across the plot at an x value, labelled just above the plot (charts leave MARKER_ROOM_PX there). */
export function XMarker({ area, x, label }: { area: PlotArea; x: number; label: string }) {
  return (
    <g data-marker={label}>
      <line x1={x} x2={x} y1={area.top} y2={area.top + area.height} strokeDasharray="4 4" strokeWidth={1} style={{ stroke: 'var(--muted)' }} />
      <text x={x} y={area.top - 4} textAnchor="middle" style={AXIS_TEXT}>
        {label}
      </text>
    </g>
  );
}

/** The box a measured chart sits in: the SVG is drawn at the box's width. */
export function ChartBox({
  boxRef,
  width,
  height,
  testId,
  children,
  data,
  label,
}: {
  boxRef: RefObject<HTMLDivElement | null>;
  width: number;
  height: number;
  testId?: string;
  children: ReactNode;
  data?: Record<string, string | number>;
  /** What the chart shows, as its accessible name: a chart is one image to assistive technology. */
  label: string;
}) {
  const attrs = Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [`data-${k}`, String(v)]));
  return (
    <div ref={boxRef} style={{ width: '100%' }}>
      <svg className="chart" width={width} height={height} viewBox={`0 0 ${width} ${height}`} role="img" aria-label={label} data-testid={testId} {...attrs}>
        {children}
      </svg>
    </div>
  );
}

export interface LineSeries {
  name: string;
  values: number[];
  color?: string;
}

/**
 * Lines over a shared x, with a y axis and, when the points' x values are given, a
 * labelled x axis. `yMax` fixes the top of the y axis, so charts meant to be read side by
 * side can share one scale; `xMax` does the same for x.
 */
export function LineChart({
  series,
  capLine,
  height = 180,
  testId,
  x,
  yLabel,
  yMax,
  integer = true,
  markers = [],
  label,
}: {
  /** What the chart shows, as its accessible name. */
  label: string;
  series: LineSeries[];
  capLine?: number;
  height?: number;
  testId?: string;
  /** Each point's x value (say, virtual minutes); without it the points are spread evenly and x has no ticks. */
  x?: { values: number[]; label: string; max?: number };
  yLabel?: string;
  yMax?: number;
  /** Counts get whole-number ticks. */
  integer?: boolean;
  markers?: { at: number; label: string }[];
}) {
  const [ref, width] = useChartWidth();
  const points = Math.max(1, ...series.map((s) => s.values.length));
  const yTicks = niceTicks(yMax ?? Math.max(capLine ?? 0, ...series.flatMap((s) => s.values)) * 1.05, { integer });
  const yTop = yTicks[yTicks.length - 1]!;
  const top = markers.length > 0 ? MARKER_ROOM_PX : 8;
  const area: PlotArea = { left: yAxisRoom(yTicks.map(tickText), !!yLabel), top, width: 0, height: height - top - (x ? 38 : 6) };
  area.width = Math.max(10, width - area.left - 12);
  const xTop = x ? Math.max(x.max ?? 0, ...x.values, 1e-9) : points - 1;
  const xTicks = x ? niceTicks(xTop, { target: Math.max(2, Math.min(8, Math.floor(area.width / 80))) }).filter((t) => t <= xTop + 1e-9) : [];
  const xOf = (i: number) => area.left + (xTop <= 0 ? 0 : ((x ? (x.values[i] ?? 0) : i) / xTop) * area.width);
  const xAt = (v: number) => area.left + (xTop <= 0 ? 0 : (v / xTop) * area.width);
  const yAt = (v: number) => area.top + area.height - (v / yTop) * area.height;
  return (
    <ChartBox boxRef={ref} width={width} height={height} testId={testId} label={label} data={{ 'y-max': yTop, 'x-max': x ? xTop : points - 1, points }}>
      <YAxis area={area} ticks={yTicks} at={yAt} label={yLabel} />
      {x ? <XAxis area={area} ticks={xTicks} at={xAt} label={x.label} /> : null}
      {markers.map((m) => (
        <XMarker key={m.label} area={area} x={xAt(m.at)} label={m.label} />
      ))}
      {capLine !== undefined ? (
        <g>
          <line x1={area.left} x2={area.left + area.width} y1={yAt(capLine)} y2={yAt(capLine)} className="cap-line" />
          <text x={area.left + area.width - 4} y={yAt(capLine) - 4} textAnchor="end" className="cap-label">
            cap {capLine}
          </text>
        </g>
      ) : null}
      {series.map((s, si) => (
        <polyline
          key={s.name}
          data-series={s.name}
          fill="none"
          stroke={s.color ?? seriesColor(si)}
          strokeWidth={2}
          strokeLinejoin="round"
          points={s.values.map((v, i) => `${xOf(i)},${yAt(v)}`).join(' ')}
        >
          <title>{s.name}</title>
        </polyline>
      ))}
    </ChartBox>
  );
}

export interface BarGroup {
  name: string;
  bars: { label: string; value: number }[];
}

/**
 * Bars in named groups, each bar labelled under the axis with its value printed above it.
 * A bar of 0 (or too short to see at this scale) still shows: a dashed mark on the
 * baseline and its value, so it reads as measured rather than missing.
 */
export function GroupedBarChart({
  groups,
  yLabel,
  yMax,
  format = tickText,
  height = 200,
  testId,
  label,
}: {
  /** What the chart shows, as its accessible name. */
  label: string;
  groups: BarGroup[];
  yLabel: string;
  yMax?: number;
  format?: (v: number) => string;
  height?: number;
  testId?: string;
}) {
  const [ref, width] = useChartWidth();
  const ticks = niceTicks(yMax ?? Math.max(0, ...groups.flatMap((g) => g.bars.map((b) => b.value))) * 1.1);
  const top = ticks[ticks.length - 1]!;
  const left = yAxisRoom(ticks.map(format), true);
  const area: PlotArea = { left, top: 18, width: Math.max(10, width - left - 12), height: height - 18 - 38 };
  const yAt = (v: number) => area.top + area.height - (v / top) * area.height;
  const groupWidth = area.width / Math.max(1, groups.length);
  const bottom = area.top + area.height;
  return (
    <ChartBox boxRef={ref} width={width} height={height} testId={testId} label={label} data={{ 'y-max': top, bars: groups.reduce((n, g) => n + g.bars.length, 0) }}>
      <YAxis area={area} ticks={ticks} at={yAt} label={yLabel} format={format} />
      {groups.map((g, gi) => {
        const slot = (groupWidth - 16) / Math.max(1, g.bars.length);
        const x0 = area.left + gi * groupWidth + 8;
        return (
          <g key={g.name} data-group={g.name}>
            {g.bars.map((b, bi) => {
              const h = Math.max(0, bottom - yAt(Math.min(b.value, top)));
              const x = x0 + bi * slot + slot * 0.15;
              const w = slot * 0.7;
              return (
                <g key={b.label} data-bar={`${g.name} ${b.label}`} data-value={b.value}>
                  <title>{`${g.name} ${b.label}: ${format(b.value)}`}</title>
                  {h >= 2 ? (
                    <rect x={x} y={bottom - h} width={w} height={h} fill={seriesColor(gi)} rx={2} />
                  ) : (
                    <rect x={x} y={bottom - 3} width={w} height={3} fill="none" stroke={seriesColor(gi)} strokeWidth={1.5} strokeDasharray="3 2" />
                  )}
                  <text x={x + w / 2} y={bottom - h - 4} textAnchor="middle" style={{ ...AXIS_TEXT, fill: 'var(--text)' }}>
                    {format(b.value)}
                  </text>
                  <text x={x + w / 2} y={bottom + 14} textAnchor="middle" style={AXIS_TEXT}>
                    {b.label}
                  </text>
                </g>
              );
            })}
            <text x={area.left + gi * groupWidth + groupWidth / 2} y={bottom + 30} textAnchor="middle" style={{ ...AXIS_TEXT, fill: seriesColor(gi), fontWeight: 600 }}>
              {g.name}
            </text>
          </g>
        );
      })}
    </ChartBox>
  );
}

export function Meter({ value, max, testId }: { value: number; max: number; testId?: string }) {
  const fraction = max > 0 ? Math.min(1, value / max) : 0;
  return (
    <div
      className="meter"
      data-testid={testId}
      title={`${value} of ${max}`}
      role="meter"
      aria-valuemin={0}
      aria-valuemax={Math.max(max, value)}
      aria-valuenow={value}
      aria-label={`${value} of ${max}`}
    >
      <div className={`meter-fill ${value >= max && max > 0 ? 'full' : ''}`} style={{ width: `${fraction * 100}%` }} />
    </div>
  );
}
