'use client';

import type { ReactNode } from 'react';
import { GroupedBarChart, LineChart, seriesColor } from '@/components/charts';
import { Card } from '@/components/ui';
import { hasFaults, type Knobs, type SimRunReport, type SimWorld } from './knobs';
import { LeaderTimeline } from './leader-timeline';
import { capLeases, leaderSpans, runningGroups, sampleMinutes, type ChartScales } from './report-scales';
import { plural } from '@/lib/plural';

/** Fixed colours for the two event series, apart from the DAG groups' first two. */
const EXPIRED_COLOR = seriesColor(1);
const REFUSED_COLOR = seriesColor(3);

function Legend({ items, note }: { items: { name: string; color: string; mark?: 'line' | 'tick' }[]; note?: ReactNode }) {
  return (
    <div className="legend small">
      {items.map((it) => (
        <span key={it.name}>
          <i className="swatch" style={it.mark === 'tick' ? { background: 'var(--text)', width: 3 } : { background: it.color }} /> {it.name}
        </span>
      ))}
      {note ? <span>{note}</span> : null}
    </div>
  );
}

/** A start latency in seconds; under a tenth of a second in milliseconds, so that 6 ms does not print as 0. */
function latencyText(v: number): string {
  if (v > 0 && v < 0.1) return `${Math.round(v * 1000)} ms`;
  return `${v.toLocaleString('en-US', { maximumFractionDigits: v < 10 ? 1 : 0 })} s`;
}

/**
 * The run's plots over virtual time: leases held per DAG group, lease expiries and refused
 * writes, who led each shard, and start latency. `scales` is either this run's own extent or
 * the one both sides of a comparison share, so the two sides can be read against each other.
 */
export function RunCharts({
  report: r,
  world,
  knobs,
  index,
  scales,
  nodes,
}: {
  report: SimRunReport;
  world: SimWorld;
  knobs: Knobs;
  index: number;
  scales: ChartScales;
  nodes: string[];
}) {
  const minutes = sampleMinutes(r, world);
  const x = { values: minutes, label: 'virtual minutes', max: scales.minutes };
  const intervalS = r.samples.length > 1 ? Math.round((r.samples[1]!.atMs - r.samples[0]!.atMs) / 1000) : 30;
  const markers = world.faultPhaseMs > 0 ? [{ at: world.faultPhaseMs / 60_000, label: hasFaults(knobs) ? 'faults stop' : 'fault phase ends' }] : [];
  const groups = runningGroups(r);
  const cap = capLeases(knobs, r.size.slots);
  const expired = r.samples.map((s) => s.expired);
  const refused = r.samples.map((s) => s.refused);
  const sum = (v: number[]) => v.reduce((a, b) => a + b, 0);
  const spans = leaderSpans(r, world);
  const count = (kind: string) => spans.filter((s) => s.kind === kind).length;
  const latency = Object.entries(r.startLatencyMs).sort(([a], [b]) => a.localeCompare(b));
  return (
    <>
      <Card title="Running jobs per DAG group">
        <LineChart
          series={groups.map((g, i) => ({ name: g, values: r.samples.map((s) => s.leasedByGroup[g] ?? 0), color: seriesColor(i) }))}
          capLine={cap}
          x={x}
          yLabel="leases held"
          yMax={scales.running}
          markers={markers}
          testId={`sim-running-chart-${index}`}
          label="Running jobs per DAG group over virtual time"
        />
        <Legend
          items={groups.map((g, i) => ({ name: g, color: seriesColor(i) }))}
          note={`one point per ${intervalS} virtual seconds${cap !== undefined ? '; dashed: the cap' : ''}`}
        />
      </Card>
      <Card title={`Lease expiries and refused writes per ${intervalS} virtual seconds`}>
        <LineChart
          series={[
            { name: 'lease expiries', values: expired, color: EXPIRED_COLOR },
            { name: 'refused writes', values: refused, color: REFUSED_COLOR },
          ]}
          x={x}
          yLabel="count"
          yMax={scales.events}
          markers={markers}
          testId={`sim-expiry-chart-${index}`}
          label={`Lease expiries and refused writes per ${intervalS} virtual seconds`}
        />
        <Legend
          items={[
            { name: 'lease expiries', color: EXPIRED_COLOR },
            { name: 'refused writes', color: REFUSED_COLOR },
          ]}
          note={
            <span data-testid={`sim-expiry-totals-${index}`} data-expired={sum(expired)} data-refused={sum(refused)}>
              {plural(sum(expired), 'lease')} expired and {plural(sum(refused), 'write')} refused in all
            </span>
          }
        />
      </Card>
      <Card title="Shard leaders over virtual time">
        <LeaderTimeline spans={spans} shardCount={world.shardCount} nodes={nodes} minutes={scales.minutes} markers={markers} testId={`sim-leader-chart-${index}`} />
        <Legend
          items={[...nodes.map((n, i) => ({ name: n, color: seriesColor(i) })), { name: 'another node took over', color: '', mark: 'tick' as const }]}
          note={
            <span data-testid={`sim-leader-summary-${index}`} data-changes={spans.length} data-takeovers={count('takeover')}>
              {count('first')} first elections, {count('takeover')} takeovers, {count('again')} re-elections of the same node
            </span>
          }
        />
      </Card>
      <Card title="Start latency by DAG group (ready to leased)">
        <GroupedBarChart
          groups={latency.map(([g, d]) => ({
            name: g,
            bars: [
              { label: 'p50', value: d.p50 / 1000 },
              { label: 'p90', value: d.p90 / 1000 },
              { label: 'p99', value: d.p99 / 1000 },
              { label: 'max', value: d.max / 1000 },
            ],
          }))}
          yLabel="seconds"
          yMax={scales.latencyS}
          format={latencyText}
          testId={`sim-latency-chart-${index}`}
          label="Start latency by DAG group, in seconds: p50, p90, p99 and max"
        />
        <div className="table-scroll">
          <table className="table small">
            <thead>
              <tr>
                <th>Group</th>
                <th className="num">Jobs</th>
                <th className="num">p50</th>
                <th className="num">p90</th>
                <th className="num">p99</th>
                <th className="num">max</th>
              </tr>
            </thead>
            <tbody>
              {latency.map(([g, d]) => (
                <tr key={g}>
                  <td>{g}</td>
                  <td className="num">{d.count}</td>
                  {[d.p50, d.p90, d.p99, d.max].map((ms, i) => (
                    <td key={i} className="num">
                      {(ms / 1000).toFixed(1)} s
                    </td>
                  ))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </Card>
    </>
  );
}
