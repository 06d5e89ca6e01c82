/// <reference lib="webworker" />
import { INVARIANTS, runScenario, SCENARIOS, type RunReport, type ScenarioFile } from '@fenceline/sim';
import type { Knobs, SimMessage, SimRequest, SimRunReport } from './knobs';
import type { SimReplay } from './replay-model';

/**
 * Runs one simulator configuration off the main thread. The simulation drains its
 * microtask queue after every event, which would freeze the page for the whole run if it
 * ran there; in a worker the page keeps painting the progress bar.
 */

const scope = self as unknown as DedicatedWorkerGlobalScope;

function rate(probability: number, minMs: number, maxMs: number) {
  return { probability, minMs, maxMs };
}

/** Builds the scenario file from the written `fanout` scenario and the page's knobs. */
function scenarioFor(label: string, k: Knobs): ScenarioFile {
  const base = SCENARIOS.fanout!;
  const [fanout, others] = base.load;
  return {
    ...base,
    seed: k.seed,
    cluster: { ...base.cluster, capFraction: k.capPercent === null ? 1 : k.capPercent / 100 },
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
    // One variant named after the configuration, in place of the file's cap-on/cap-off
    // pair: the page runs each side of a comparison in its own worker.
    variants: [{ name: label, overrides: {} }],
  };
}

scope.onmessage = async (e: MessageEvent<SimRequest>) => {
  const post = (m: SimMessage) => scope.postMessage(m);
  try {
    let last = 0;
    const report = await runScenario(scenarioFor(e.data.label, e.data.knobs), (p) => {
      // Progress arrives about every virtual minute; posting more often than the page
      // can paint would only queue messages.
      const now = performance.now();
      if (now - last < 50) return;
      last = now;
      post({ kind: 'progress', progress: { phase: p.phase, virtualMs: p.virtualMs, totalMs: p.totalMs, events: p.events } });
    }, { dagReplay: true });
    const run: RunReport = report.runs[0]!;
    // The page declares its own copy of the replay's shape; this line fails to compile when they drift apart.
    run.dagReplay satisfies SimReplay | undefined;
    post({ kind: 'report', report: run as unknown as SimRunReport, invariants: INVARIANTS });
  } catch (err) {
    post({ kind: 'error', message: err instanceof Error ? `${err.message}` : String(err) });
  }
};
