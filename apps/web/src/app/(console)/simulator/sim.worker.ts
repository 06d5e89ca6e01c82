/// <reference lib="webworker" />
import { INVARIANTS, runScenario, type RunReport } from '@fenceline/sim';
import type { SimMessage, SimRequest, SimRunReport } from './knobs';
import type { SimReplay } from './replay-model';
import { scenarioFor, worldOf } from './sim-scenario';

/**
 * Runs one simulator configuration off the main thread. The simulation drains its
 * microtask queue after every event, which would freeze the page for the whole run if it
 * ran there; in a worker the page keeps painting the progress bar.
 */

const scope = self as unknown as DedicatedWorkerGlobalScope;

scope.onmessage = async (e: MessageEvent<SimRequest>) => {
  const post = (m: SimMessage) => scope.postMessage(m);
  try {
    let last = 0;
    const file = scenarioFor(e.data.label, e.data.knobs, e.data.livenessMs);
    const report = await runScenario(
      file,
      (p) => {
        // Progress arrives about every virtual minute; posting more often than the page
        // can paint would only queue messages.
        const now = performance.now();
        if (now - last < 50) return;
        last = now;
        post({ kind: 'progress', progress: { phase: p.phase, virtualMs: p.virtualMs, totalMs: p.totalMs, events: p.events } });
      },
      { dagReplay: true },
    );
    const run: RunReport = report.runs[0]!;
    // The page declares its own copy of the replay's shape; this line fails to compile when they drift apart.
    run.dagReplay satisfies SimReplay | undefined;
    post({ kind: 'report', report: run as unknown as SimRunReport, invariants: INVARIANTS, world: worldOf(file) });
  } catch (err) {
    post({ kind: 'error', message: err instanceof Error ? `${err.message}` : String(err) });
  }
};
