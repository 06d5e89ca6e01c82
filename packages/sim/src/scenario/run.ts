import type { InvariantId, Violation } from '../check/checker';
import { distribution, type Distribution, type LeaderChange, type Sample } from '../report/metrics';
import { headline, type Figures } from '../report/headline';
import { ReplayRecorder, type DagReplay, type ReplayOptions } from '../report/replay';
import type { FaultLog } from '../world/faults';
import { runWorld, type Outcome, type Progress, type WorldOptions } from '../world/world';
import { merge, resolveScenario, type DeepPartial, type ScenarioConfig } from './config';
import { checkScenario } from './check';
import { randomizeScenario } from './randomize';

/** A scenario file: a partial ScenarioConfig, completed with the defaults. */
export type ScenarioFile = DeepPartial<ScenarioConfig> & Pick<ScenarioConfig, 'name' | 'load' | 'headline'>;

export interface RunReport {
  scenario: string;
  variant: string;
  seed: number;
  scale: number;
  outcome: Outcome;
  violations: Violation[];
  /** With keepGoing: every violation per invariant (`violations` keeps the first hundred). */
  violationCounts?: Partial<Record<InvariantId, number>>;
  crash: string | null;
  /** The events just before the run stopped, for a failing run. */
  traceTail: string[];
  traceHash: string;
  events: number;
  wallMs: number;
  eventsPerSecond: number;
  virtualMs: number;
  size: { dags: number; jobsPlannedPerDay: number; workers: number; slots: number; nodes: number };
  figures: Figures;
  totals: Record<string, number>;
  workerStats: Record<string, number>;
  startLatencyMs: Record<string, Distribution>;
  runMakespanMs: Record<string, Distribution>;
  refusedByCode: Record<string, number>;
  refusedByOp: Record<string, number>;
  storeCalls: Record<string, number>;
  nodeMetrics: Record<string, number>;
  nodeErrors: { expected: number; unexpected: string[] };
  leaderChanges: LeaderChange[];
  samples: Sample[];
  faults: FaultLog[];
  /** The command that replays this run. */
  replay: string;
  /** One DAG's jobs over virtual time, when `RunScenarioOptions.dagReplay` asked for it. */
  dagReplay?: DagReplay;
}

export interface ScenarioReport {
  scenario: string;
  description: string;
  seed: number;
  /** The worst outcome over all runs: crash, then safety, then liveness, then ok. */
  outcome: Outcome;
  runs: RunReport[];
}

export interface ScenarioProgress extends Progress {
  scenario: string;
  variant: string;
  seed: number;
  run: number;
  runs: number;
}

export interface RunScenarioOptions {
  /** Overrides the file's seed; with `runs`, seeds seed, seed + 1, ... */
  seed?: number;
  runs?: number;
  scale?: number;
  /** Only these variants (by name). */
  variants?: string[];
  /** Tests swap the store for a deliberately broken one. */
  makeStore?: WorldOptions['makeStore'];
  /** Also record a replay of one DAG (report/replay.ts); recording only observes, so the trace hash is unchanged. */
  dagReplay?: boolean | ReplayOptions;
  /** Runs each world to its end past its violations (all counted, the run still fails), to measure a failing run's figures. */
  keepGoing?: boolean;
}

const SEVERITY: Outcome[] = ['ok', 'liveness', 'safety', 'crash'];

/**
 * Runs a scenario (every variant, for every seed asked for) and reports. It imports
 * nothing from Node, so the console can call it from a Web Worker and post each progress
 * event and the final report (plain JSON) back to the page.
 */
export async function runScenario(file: ScenarioFile | ScenarioConfig, onProgress?: (p: ScenarioProgress) => void, options: RunScenarioOptions = {}): Promise<ScenarioReport> {
  const base = resolveScenario(file as ScenarioFile);
  const firstSeed = options.seed ?? base.seed;
  const runs = Math.max(1, options.runs ?? 1);
  const variants = (base.variants ?? [{ name: 'default', overrides: {} }]).filter((v) => !options.variants || options.variants.includes(v.name));
  const reports: RunReport[] = [];
  const total = runs * variants.length;
  for (let k = 0; k < runs; k++) {
    const seed = firstSeed + k;
    for (const variant of variants) {
      let config = merge({ ...base, seed, variants: undefined }, variant.overrides);
      if (options.scale !== undefined) config = { ...config, scale: options.scale };
      if (config.randomize) config = randomizeScenario(config, seed);
      checkScenario(config);
      const runIndex = reports.length;
      const recorder = options.dagReplay ? new ReplayRecorder(config, options.dagReplay === true ? {} : options.dagReplay) : null;
      const started = performance.now();
      const world = await runWorld(config, {
        makeStore: recorder ? recorder.wrap(options.makeStore) : options.makeStore,
        onProgress: (p) => onProgress?.({ ...p, scenario: base.name, variant: variant.name, seed, run: runIndex, runs: total }),
        ...(options.keepGoing ? { keepGoing: true } : {}),
      });
      const wallMs = performance.now() - started;
      const toDist = (m: Map<string, number[]>): Record<string, Distribution> => Object.fromEntries([...m].map(([g, v]) => [g, distribution(v)]));
      reports.push({
        scenario: base.name,
        variant: variant.name,
        seed,
        scale: config.scale,
        outcome: world.outcome,
        violations: world.violations,
        ...(options.keepGoing ? { violationCounts: world.violationCounts } : {}),
        crash: world.crash,
        traceTail: world.outcome === 'ok' ? [] : world.traceTail,
        traceHash: world.traceHash,
        events: world.events,
        wallMs: Math.round(wallMs),
        eventsPerSecond: Math.round(world.events / Math.max(wallMs / 1000, 1e-9)),
        virtualMs: world.endMs - world.startMs,
        size: world.size,
        figures: headline(config, world),
        totals: { ...world.metrics.totals },
        workerStats: { ...world.workerStats },
        startLatencyMs: toDist(world.metrics.startLatencyMs),
        runMakespanMs: toDist(world.metrics.runMakespanMs),
        refusedByCode: world.metrics.refusedByCode,
        refusedByOp: world.metrics.refusedByOp,
        storeCalls: world.metrics.storeCalls,
        nodeMetrics: world.nodeMetrics,
        nodeErrors: world.nodeErrors,
        leaderChanges: world.metrics.leaderChanges,
        samples: world.metrics.samples,
        faults: world.faults,
        ...(recorder ? { dagReplay: await recorder.finish(world.endMs) } : {}),
        replay: `npm run sim -- ${base.name} --seed ${seed}${variants.length > 1 ? ` --variant ${variant.name}` : ''}${config.scale !== 1 ? ` --scale ${config.scale}` : ''}`,
      });
    }
  }
  const outcome = reports.reduce<Outcome>((worst, r) => (SEVERITY.indexOf(r.outcome) > SEVERITY.indexOf(worst) ? r.outcome : worst), 'ok');
  return { scenario: base.name, description: base.description, seed: firstSeed, outcome, runs: reports };
}
