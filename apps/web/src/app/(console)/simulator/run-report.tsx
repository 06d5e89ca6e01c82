'use client';

import { InvariantsCard } from './invariants-card';
import type { InvariantTable, Knobs, SimRunReport, SimWorld } from './knobs';
import { ReplayPanel } from './replay-panel';
import type { ChartScales } from './report-scales';
import { RunCharts } from './run-charts';
import { RunStats } from './run-stats';

/** Everything one finished simulation shows: its figures, the replay, the invariants and the plots. */
export function RunReportView({
  report,
  invariants,
  world,
  knobs,
  index,
  scales,
  compact,
  nodes,
}: {
  report: SimRunReport;
  invariants: InvariantTable;
  world: SimWorld;
  knobs: Knobs;
  index: number;
  scales: ChartScales;
  compact: boolean;
  nodes: string[];
}) {
  return (
    <>
      <RunStats report={report} knobs={knobs} index={index} compact={compact} />
      {report.dagReplay ? <ReplayPanel replay={report.dagReplay} index={index} /> : null}
      <InvariantsCard report={report} invariants={invariants} world={world} index={index} />
      <RunCharts report={report} world={world} knobs={knobs} index={index} scales={scales} nodes={nodes} />
    </>
  );
}
