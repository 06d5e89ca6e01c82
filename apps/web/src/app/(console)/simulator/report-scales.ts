import type { Knobs, SimRunReport, SimWorld } from './knobs';

/**
 * The numbers the Simulator's plots draw, taken from a run report, and the scales two
 * compared runs share: each side drawn on its own scale would make a cap-on run's 60 leases
 * look as tall as a cap-off run's 200.
 */

/** Each sample's virtual minute since the simulation began (a sample closes the interval before it). */
export function sampleMinutes(r: SimRunReport, world: SimWorld): number[] {
  return r.samples.map((s) => (s.atMs - world.startMs) / 60_000);
}

/** The DAG groups with leases in the samples, in a fixed order so that each keeps its colour on both sides. */
export function runningGroups(r: SimRunReport): string[] {
  return [...new Set(r.samples.flatMap((s) => Object.keys(s.leasedByGroup)))].sort();
}

/** The cap in leases, as the scheduler computes it from the pool (workers times slots each). */
export function capLeases(k: Knobs, poolSlots: number): number | undefined {
  return k.capPercent === null ? undefined : Math.max(1, Math.floor((k.capPercent / 100) * poolSlots + 1e-9));
}

/** The run's length in virtual minutes: the report's, or the planned one if the run stopped early. */
export function runMinutes(r: SimRunReport, world: SimWorld): number {
  return Math.max(r.virtualMs, world.faultPhaseMs + world.livenessMs) / 60_000;
}

export interface ChartScales {
  /** Virtual minutes across every time plot. */
  minutes: number;
  /** Leases held, cap included. */
  running: number;
  /** Lease expiries or refused writes in one sample interval. */
  events: number;
  /** Start latency, in seconds. */
  latencyS: number;
}

export interface ScaledRun {
  report: SimRunReport;
  world: SimWorld;
  knobs: Knobs;
}

/** The data's own extent for each plot, taken over every run given: one run for its own scale, both sides of a comparison for a shared one. */
export function scalesOf(runs: ScaledRun[]): ChartScales {
  let minutes = 0;
  let running = 0;
  let events = 0;
  let latencyS = 0;
  for (const { report: r, world, knobs } of runs) {
    minutes = Math.max(minutes, runMinutes(r, world));
    running = Math.max(running, capLeases(knobs, r.size.slots) ?? 0);
    for (const s of r.samples) {
      for (const v of Object.values(s.leasedByGroup)) running = Math.max(running, v);
      events = Math.max(events, s.expired, s.refused);
    }
    for (const d of Object.values(r.startLatencyMs)) latencyS = Math.max(latencyS, d.max / 1000);
  }
  return { minutes, running, events, latencyS };
}

export interface ShardSpan {
  shard: number;
  nodeId: string;
  epoch: number;
  fromMin: number;
  toMin: number;
  /** The shard's first election, a takeover by another node, or its leader elected again (after its lease lapsed). */
  kind: 'first' | 'takeover' | 'again';
}

/**
 * Who led each shard when, as spans from one election to the next. The report records
 * elections only, so a span lasts until the shard's next one: a leader that died leaves
 * its span running until a standby takes over (the takeover is what the plot marks).
 */
export function leaderSpans(r: SimRunReport, world: SimWorld): ShardSpan[] {
  const endMin = runMinutes(r, world);
  const byShard = new Map<number, SimRunReport['leaderChanges']>();
  for (const c of [...r.leaderChanges].sort((a, b) => a.atMs - b.atMs)) {
    const list = byShard.get(c.shard);
    if (list) list.push(c);
    else byShard.set(c.shard, [c]);
  }
  const spans: ShardSpan[] = [];
  for (const [shard, changes] of byShard) {
    changes.forEach((c, i) => {
      const next = changes[i + 1];
      spans.push({
        shard,
        nodeId: c.nodeId,
        epoch: c.epoch,
        fromMin: (c.atMs - world.startMs) / 60_000,
        toMin: next ? (next.atMs - world.startMs) / 60_000 : endMin,
        kind: i === 0 ? 'first' : changes[i - 1]!.nodeId === c.nodeId ? 'again' : 'takeover',
      });
    });
  }
  return spans.sort((a, b) => a.shard - b.shard || a.fromMin - b.fromMin);
}
