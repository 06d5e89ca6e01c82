/**
 * The knobs the Simulator page offers and the messages it exchanges with its Web Worker.
 * This file imports nothing from the simulator, so the page's own bundle stays small and
 * the simulator is loaded only inside the worker.
 */

import type { SimReplay } from './replay-model';

export interface Knobs {
  workers: number;
  /** The per-DAG cap as a percentage of the pool; null runs without a cap. */
  capPercent: number | null;
  /**
   * Lending's reserve as a fraction of the pool: the share of slots a DAG at its cap may
   * not borrow. Compare's third side runs with it; Run and the other sides keep the cap strict.
   */
  lendReserve: number;
  /** Set on the side that lends: a DAG at its cap borrows idle slots above the reserve. */
  lending?: boolean;
  fanoutTasks: number;
  otherDags: number;
  /** Probability per ten-second fault tick that each kind of fault starts somewhere. */
  workerPause: number;
  workerCrash: number;
  leaderCrash: number;
  linkCut: number;
  seed: number;
}

/**
 * The `fanout` scenario at about a fiftieth of its written size: 200 workers, a 200-job
 * fan-out and 20 other DAGs. A run takes two or three seconds in a browser, which keeps
 * the page interactive to play with while keeping the cap's effect plainly visible.
 */
export const DEFAULT_KNOBS: Knobs = {
  workers: 200,
  capPercent: 30,
  lendReserve: 0.05,
  fanoutTasks: 200,
  otherDags: 20,
  workerPause: 0,
  workerCrash: 0,
  leaderCrash: 0,
  linkCut: 0,
  seed: 1,
};

/** Whether any fault is switched on: with every rate at 0 the "fault phase" is an ordinary run. */
export function hasFaults(k: Knobs): boolean {
  return k.workerPause > 0 || k.workerCrash > 0 || k.leaderCrash > 0 || k.linkCut > 0;
}

export interface SimRequest {
  label: string;
  knobs: Knobs;
  /** The healed phase, sized by the page from the knobs (liveness.ts). */
  livenessMs: number;
}

/** The parts of the simulated world the plots need besides the report: its clock and its shards. */
export interface SimWorld {
  /** The virtual time the simulation began at; the report's times are on this clock. */
  startMs: number;
  faultPhaseMs: number;
  livenessMs: number;
  shardCount: number;
  nodes: number;
}

export interface SimProgress {
  phase: string;
  virtualMs: number;
  totalMs: number;
  events: number;
}

export type InvariantTable = Record<string, { kind: 'safety' | 'liveness'; text: string }>;

export type SimMessage =
  | { kind: 'progress'; progress: SimProgress }
  // The report is typed loosely here so that this file need not import the simulator.
  | { kind: 'report'; report: SimRunReport; invariants: InvariantTable; world: SimWorld }
  | { kind: 'error'; message: string };

/** The parts of the simulator's RunReport the page shows. */
export interface SimRunReport {
  variant: string;
  seed: number;
  outcome: 'ok' | 'safety' | 'liveness' | 'crash';
  crash: string | null;
  violations: { invariant: string; kind: 'safety' | 'liveness'; atMs: number; message: string }[];
  traceHash: string;
  events: number;
  wallMs: number;
  eventsPerSecond: number;
  virtualMs: number;
  size: { dags: number; workers: number; slots: number; nodes: number };
  figures: Record<string, number | string | boolean>;
  totals: Record<string, number>;
  startLatencyMs: Record<string, { count: number; p50: number; p90: number; p99: number; max: number; mean: number }>;
  leaderChanges: { atMs: number; shard: number; nodeId: string; epoch: number }[];
  samples: { atMs: number; leased: number; leasedByGroup: Record<string, number>; expired: number; refused: number; succeeded: number; handedBack: number }[];
  faults: unknown[];
  replay: string;
  /** The fan-out DAG's jobs over virtual time, for the Replay panel. */
  dagReplay?: SimReplay;
}
