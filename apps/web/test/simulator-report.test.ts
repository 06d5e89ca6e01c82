import { describe, expect, it } from 'vitest';
import { fanoutFigures, makespanText, progressText } from '../src/app/(console)/simulator/fanout-figures';
import { DEFAULT_KNOBS, type SimRunReport, type SimWorld } from '../src/app/(console)/simulator/knobs';
import { leaderSpans, scalesOf } from '../src/app/(console)/simulator/report-scales';

const START = Date.parse('2025-01-06T00:00:00.000Z');
const WORLD: SimWorld = { startMs: START, faultPhaseMs: 30 * 60_000, livenessMs: 10 * 60_000, shardCount: 2, nodes: 2 };
const min = (m: number) => START + m * 60_000;

function report(p: Partial<SimRunReport>): SimRunReport {
  return {
    variant: 'x',
    seed: 1,
    outcome: 'ok',
    crash: null,
    violations: [],
    traceHash: 'h',
    events: 0,
    wallMs: 0,
    eventsPerSecond: 0,
    virtualMs: 40 * 60_000,
    size: { dags: 1, workers: 10, slots: 10, nodes: 2 },
    figures: {},
    totals: {},
    startLatencyMs: {},
    leaderChanges: [],
    samples: [],
    faults: [],
    replay: '',
    ...p,
  };
}

describe('Simulator report: the fan-out headline', () => {
  it('shows a finished fan-out by its makespan', () => {
    const ff = fanoutFigures({ fanoutFinished: true, fanoutMakespanMin: 17.42, fanoutJobs: 200, fanoutJobsDone: 200, fanout50PercentDoneMin: 8.1, fanout99PercentDoneMin: 16.9 });
    expect(makespanText(ff)).toBe('17.4 min');
    expect(progressText(ff)).toBe('half done at 8.1 min, 99% at 16.9 min');
  });

  it('shows an unfinished fan-out by how far it got, with a dash for what it never reached', () => {
    const ff = fanoutFigures({ fanoutFinished: false, fanoutJobs: 200, fanoutJobsDone: 21 });
    expect(makespanText(ff)).toBe('not finished');
    expect(progressText(ff)).toBe('21 of 200 jobs done; half done at —, 99% at —');
    expect(progressText(fanoutFigures({ fanoutFinished: false, fanoutJobs: 200, fanoutJobsDone: 150, fanout50PercentDoneMin: 500 }))).toBe(
      '150 of 200 jobs done; half done at 500 min, 99% at —',
    );
  });
});

describe('Simulator report: plots', () => {
  it('turns elections into spans per shard, telling a takeover from a re-election', () => {
    const spans = leaderSpans(
      report({
        leaderChanges: [
          { atMs: min(0.1), shard: 0, nodeId: 'node-0', epoch: 1 },
          { atMs: min(0.1), shard: 1, nodeId: 'node-1', epoch: 1 },
          { atMs: min(12), shard: 0, nodeId: 'node-1', epoch: 2 },
          { atMs: min(20), shard: 1, nodeId: 'node-1', epoch: 2 },
        ],
      }),
      WORLD,
    );
    expect(spans.map((s) => [s.shard, s.nodeId, s.kind, Math.round(s.fromMin), Math.round(s.toMin)])).toEqual([
      [0, 'node-0', 'first', 0, 12],
      [0, 'node-1', 'takeover', 12, 40],
      [1, 'node-1', 'first', 0, 20],
      [1, 'node-1', 'again', 20, 40],
    ]);
  });

  it('gives both sides of a comparison one scale per plot, the larger of the two', () => {
    const sample = (atMin: number, fanout: number, expired: number) => ({
      atMs: min(atMin),
      leased: fanout,
      leasedByGroup: { fanout },
      expired,
      refused: 0,
      succeeded: 0,
      handedBack: 0,
    });
    const capOn = {
      report: report({ samples: [sample(1, 3, 0), sample(2, 3, 4)], startLatencyMs: { fanout: { count: 1, p50: 0, p90: 0, p99: 0, max: 90_000, mean: 0 } } }),
      world: WORLD,
      knobs: DEFAULT_KNOBS,
    };
    const capOff = {
      report: report({ samples: [sample(1, 10, 1)], startLatencyMs: { fanout: { count: 1, p50: 0, p90: 0, p99: 0, max: 2_000, mean: 0 } } }),
      world: WORLD,
      knobs: { ...DEFAULT_KNOBS, capPercent: null },
    };
    expect(scalesOf([capOn, capOff])).toEqual({ minutes: 40, running: 10, events: 4, latencyS: 90 });
    // Alone, the cap-on side's scale includes its cap of floor(30% of 10) = 3 leases.
    expect(scalesOf([capOn]).running).toBe(3);
  });
});
