'use client';

import { AXIS_TEXT, ChartBox, MARKER_ROOM_PX, niceTicks, seriesColor, useChartWidth, XAxis, XMarker, type PlotArea } from '@/components/charts';
import type { ShardSpan } from './report-scales';

const ROW_PX = 13;
const ROW_GAP_PX = 3;

/**
 * Which node led which shard when: a row per shard, a bar per leader coloured by node,
 * from its election to the shard's next one, and a tick where another node took over.
 */
export function LeaderTimeline({
  spans,
  shardCount,
  nodes,
  minutes,
  markers = [],
  testId,
}: {
  spans: ShardSpan[];
  shardCount: number;
  /** Node ids in colour order, the same on both sides of a comparison. */
  nodes: string[];
  minutes: number;
  markers?: { at: number; label: string }[];
  testId?: string;
}) {
  const [ref, width] = useChartWidth();
  const rows = Math.max(shardCount, ...spans.map((s) => s.shard + 1));
  const area: PlotArea = { left: 58, top: markers.length > 0 ? MARKER_ROOM_PX : 6, width: Math.max(10, width - 58 - 12), height: rows * (ROW_PX + ROW_GAP_PX) };
  const height = area.top + area.height + 40;
  const xAt = (m: number) => area.left + (Math.min(Math.max(m, 0), minutes) / Math.max(minutes, 1e-9)) * area.width;
  const yOf = (shard: number) => area.top + shard * (ROW_PX + ROW_GAP_PX);
  const ticks = niceTicks(minutes, { target: Math.max(2, Math.min(8, Math.floor(area.width / 80))) }).filter((t) => t <= minutes + 1e-9);
  const takeovers = spans.filter((s) => s.kind === 'takeover').length;
  return (
    <ChartBox
      boxRef={ref}
      width={width}
      height={height}
      testId={testId}
      label={`Leader of each shard over virtual time: ${takeovers} takeovers`}
      data={{ changes: spans.length, takeovers, shards: rows }}
    >
      {Array.from({ length: rows }, (_, shard) => (
        <text key={shard} x={area.left - 6} y={yOf(shard) + ROW_PX - 3} textAnchor="end" style={{ ...AXIS_TEXT, fontSize: 10 }}>
          shard {shard}
        </text>
      ))}
      {spans.map((s) => {
        const x1 = xAt(s.fromMin);
        const x2 = Math.max(x1 + 1, xAt(s.toMin));
        const y = yOf(s.shard);
        const color = seriesColor(Math.max(0, nodes.indexOf(s.nodeId)));
        const what = s.kind === 'first' ? 'elected' : s.kind === 'takeover' ? 'took over' : 'elected again';
        return (
          <g key={`${s.shard}-${s.epoch}-${s.fromMin}`} data-span={s.kind} data-shard={s.shard} data-node={s.nodeId}>
            <title>{`shard ${s.shard}: ${s.nodeId} ${what} at ${s.fromMin.toFixed(1)} min (epoch ${s.epoch})`}</title>
            <rect x={x1} y={y} width={x2 - x1} height={ROW_PX} fill={color} fillOpacity={0.75} rx={2} />
            {s.kind !== 'first' ? <rect x={x1 - 1} y={y - 2} width={3} height={ROW_PX + 4} style={{ fill: 'var(--text)' }} /> : null}
          </g>
        );
      })}
      {markers.map((m) => (
        <XMarker key={m.label} area={area} x={xAt(m.at)} label={m.label} />
      ))}
      <XAxis area={area} ticks={ticks} at={xAt} label="virtual minutes" />
    </ChartBox>
  );
}
