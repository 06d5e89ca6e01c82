import { isTerminalJobState } from '@fenceline/core';
import { type RunActionRequest, type RunActionStore } from '@fenceline/core/store';
import type { Rng } from '../engine/random';
import type { Simulation } from '../engine/simulation';
import type { OperatorConfig } from '../scenario/config';
import type { MemoryStore } from '../store/memory-store';

export interface OperatorLog {
  atMs: number;
  kind: RunActionRequest['kind'];
  runId: string;
  taskIds: string[];
}

/**
 * An operator at the console during the fault phase: every tick, with the scenario's
 * probabilities, it cancels a running run (or one task of it, with its downstream), or
 * clears a finished task of a run (or retries a run from its failures). Its requests go
 * through the store's RunActionStore, as the console's do, and the shard leaders apply
 * them with the production code, under every fault the world injects; the checker's I10
 * holds the store to what the actions promise.
 */
export class SimOperator {
  readonly log: OperatorLog[] = [];

  constructor(
    private readonly sim: Simulation,
    private readonly rng: Rng,
    private readonly config: OperatorConfig,
    /** The store's tables, read to pick a run as an operator picks one from the console. */
    private readonly tables: MemoryStore,
    /** Where requests go: the store itself, as the console's requests reach it. */
    private readonly store: RunActionStore,
    private readonly onError: (err: unknown) => void,
  ) {}

  start(untilMs: number): void {
    const tick = (): void => {
      if (this.sim.nowMs >= untilMs) return;
      this.roll();
      this.sim.after(this.config.tickMs, 'operator tick', tick);
    };
    this.sim.after(this.config.tickMs, 'operator tick', tick);
  }

  private roll(): void {
    if (this.rng.chance(this.config.cancel)) {
      const running = [...this.tables.allRuns()].filter((r) => r.state === 'running');
      if (running.length > 0) {
        const run = this.rng.pick(running);
        const open = run.jobIds.map((id) => this.tables.jobById(id)!).filter((j) => !isTerminalJobState(j.state));
        // Half the cancels are of the whole run, half of one task and what depends on it.
        if (open.length > 0 && this.rng.chance(0.5)) this.request({ runId: run.id, kind: 'cancel', taskIds: [this.rng.pick(open).taskId], downstream: true });
        else this.request({ runId: run.id, kind: 'cancel' });
      }
    }
    if (this.rng.chance(this.config.clear)) {
      const runs = [...this.tables.allRuns()].filter((r) => r.state !== 'queued' && r.jobIds.some((id) => isTerminalJobState(this.tables.jobById(id)!.state)));
      if (runs.length > 0) {
        const run = this.rng.pick(runs);
        const ended = run.jobIds.map((id) => this.tables.jobById(id)!).filter((j) => isTerminalJobState(j.state));
        if (run.state === 'failed' && this.rng.chance(0.5)) this.request({ runId: run.id, kind: 'retry_failed' });
        else this.request({ runId: run.id, kind: 'clear', taskIds: [this.rng.pick(ended).taskId], downstream: this.rng.chance(0.5) });
      }
    }
  }

  private request(req: Omit<RunActionRequest, 'requestedBy'>): void {
    this.log.push({ atMs: this.sim.nowMs, kind: req.kind, runId: req.runId, taskIds: req.taskIds ?? [] });
    this.store.requestRunAction({ ...req, requestedBy: 'sim-operator' }).catch(this.onError);
  }
}
