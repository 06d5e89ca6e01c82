'use client';

import { Card } from '@/components/ui';
import { hasFaults, type InvariantTable, type Knobs, type SimProgress, type SimRunReport, type SimWorld } from './knobs';
import { spanText } from './liveness';
import type { ChartScales } from './report-scales';
import { RunReportView } from './run-report';

/** One simulation on the page: a single run, or one side of a comparison. */
export interface Side {
  /** "Simulation", or "Simulation A" / "Simulation B" side by side. */
  name: string;
  /** What sets this configuration apart: "cap 30%", "cap off". */
  label: string;
  knobs: Knobs;
  livenessMs: number;
  /** 'stopped' is the user's Stop button, not a failure. */
  state: 'running' | 'done' | 'failed' | 'stopped';
  progress: SimProgress | null;
  report: SimRunReport | null;
  invariants: InvariantTable | null;
  world: SimWorld | null;
  error: string | null;
}

/** The simulator's phase in words: with every fault rate at 0 the first phase has no faults to speak of. */
export function phaseText(phase: string, k: Knobs): string {
  switch (phase) {
    case 'setup':
      return 'setting up';
    case 'faults':
      return hasFaults(k) ? 'faults on' : 'running (no faults set)';
    case 'liveness':
      return hasFaults(k) ? 'faults healed, draining' : 'draining';
    case 'done':
      return 'checking the end state';
    default:
      return phase;
  }
}

function statusText(side: Side): string | null {
  const p = side.progress;
  const r = side.report;
  switch (side.state) {
    case 'running':
      return p
        ? `${phaseText(p.phase, side.knobs)}: ${spanText(p.virtualMs)} of ${spanText(p.totalMs)} virtual, ${p.events.toLocaleString('en-US')} events`
        : 'starting the simulator…';
    case 'stopped':
      return p ? `stopped at ${spanText(p.virtualMs)} of ${spanText(p.totalMs)} virtual; nothing to report` : 'stopped before it began';
    case 'failed':
      return side.error;
    case 'done':
      return r
        ? `done: ${spanText(r.virtualMs)} of virtual time, ${r.events.toLocaleString('en-US')} events in ${(r.wallMs / 1000).toFixed(1)} s (${Math.round(r.eventsPerSecond).toLocaleString('en-US')} events/s), trace ${r.traceHash}`
        : null;
  }
}

export function SideView({ side, index, scales, compact, nodes }: { side: Side; index: number; scales: ChartScales | null; compact: boolean; nodes: string[] }) {
  const p = side.progress;
  const fraction = side.state === 'done' ? 1 : p && p.totalMs > 0 ? Math.min(1, p.virtualMs / p.totalMs) : 0;
  const r = side.report;
  return (
    <div data-testid={`sim-side-${index}`} data-state={side.state}>
      <Card title={`${side.name}: ${side.label}, seed ${side.knobs.seed}`}>
        <div
          className="meter"
          role="progressbar"
          aria-label={`${side.name}: share of the virtual time simulated`}
          aria-valuemin={0}
          aria-valuemax={100}
          aria-valuenow={Math.round(fraction * 100)}
          data-testid={`sim-progress-${index}`}
        >
          <div className="meter-fill" style={{ width: `${fraction * 100}%` }} />
        </div>
        <div className={`small ${side.state === 'failed' ? 'bad-text' : 'muted'}`} data-testid={`sim-status-${index}`}>
          {statusText(side)}
        </div>
      </Card>
      {r && side.invariants && side.world && scales ? (
        <RunReportView report={r} invariants={side.invariants} world={side.world} knobs={side.knobs} index={index} scales={scales} compact={compact} nodes={nodes} />
      ) : null}
    </div>
  );
}
