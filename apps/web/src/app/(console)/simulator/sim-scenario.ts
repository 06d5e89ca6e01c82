import { resolveScenario, SCENARIOS, type ScenarioFile } from '@fenceline/sim';
import type { Knobs, SimWorld } from './knobs';

/**
 * The scenario a Simulator run simulates, built from the written `fanout` scenario and the
 * page's knobs. Only the Web Worker imports this file (and so the simulator); the page's
 * own bundle stays small.
 */

function rate(probability: number, minMs: number, maxMs: number) {
  return { probability, minMs, maxMs };
}

/**
 * The healed phase comes from the page, which sizes it from the knobs (liveness.ts): the
 * file's ten minutes suit its 10,000 workers, not ten workers draining the same fan-out
 * three at a time.
 */
export function scenarioFor(label: string, k: Knobs, livenessMs: number): ScenarioFile {
  const base = SCENARIOS.fanout!;
  const [fanout, others] = base.load;
  return {
    ...base,
    seed: k.seed,
    livenessMs,
    cluster: { ...base.cluster, capFraction: k.capPercent === null ? 1 : k.capPercent / 100, lendReserveFraction: k.lending ? k.lendReserve : null },
    workers: { ...base.workers, count: k.workers },
    load: [
      { ...fanout!, tasks: k.fanoutTasks },
      { ...others!, count: k.otherDags },
    ],
    faults: {
      tickMs: 10_000,
      // The durations follow the swarm scenario's ranges: a pause may outlast a lease, a
      // leader may stay down long enough for a standby to take over.
      ...(k.workerPause > 0 ? { workerPause: rate(k.workerPause, 5_000, 150_000) } : {}),
      ...(k.workerCrash > 0 ? { workerCrash: rate(k.workerCrash, 10_000, 120_000) } : {}),
      ...(k.leaderCrash > 0 ? { leaderCrash: rate(k.leaderCrash, 5_000, 60_000) } : {}),
      ...(k.linkCut > 0 ? { linkCut: rate(k.linkCut, 2_000, 30_000) } : {}),
    },
    // One variant named after the configuration, in place of the file's three (cap, no
    // cap, lending): the page runs each side of a comparison in its own worker.
    variants: [{ name: label, overrides: {} }],
  };
}

/** The clock and shape of the world a scenario file describes, for the page's plots. */
export function worldOf(file: ScenarioFile): SimWorld {
  const c = resolveScenario(file);
  return { startMs: Date.parse(c.startAt), faultPhaseMs: c.faultPhaseMs, livenessMs: c.livenessMs, shardCount: c.cluster.shardCount, nodes: c.cluster.nodes };
}
