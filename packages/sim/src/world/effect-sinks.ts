import { decide, recordAfter, type RecordedFence } from '@fenceline/effects/decide';
import type { EffectMode, EffectOutcome } from '@fenceline/effects/decide';

/** One effect a job tried, as a sink decided it. */
export interface EffectAttempt {
  sink: string;
  mode: EffectMode;
  key: string;
  fence: number;
  outcome: EffectOutcome;
  /** Tried after the job's lease was lost: the task went on without knowing (a paused worker waking up). */
  late: boolean;
  atMs: number;
}

/**
 * The places a job's effect lands in the simulated world, outside the scheduler: the user's
 * database (once mode, as the fenced transaction) and a service behind the receiver guard
 * (latest mode). Each decides by @fenceline/effects' own rule, the one the PostgreSQL
 * ledger, the HTTP guard and the file write apply under the key's lock; a sink's step is
 * atomic here, as the key's row lock makes it there.
 */
export class EffectSinks {
  private readonly records = new Map<string, RecordedFence>();

  constructor(
    private readonly sinks: { name: string; mode: EffectMode }[],
    private readonly observe: (attempt: EffectAttempt) => void,
  ) {}

  /** Every sink takes the job's effect under `fence`; the checker judges each attempt. */
  apply(key: string, fence: number, late: boolean, atMs: number): void {
    for (const { name, mode } of this.sinks) {
      const id = `${name}\u0000${key}`;
      const recorded = this.records.get(id) ?? null;
      const outcome = decide(recorded, fence, mode);
      if (outcome !== 'stale') this.records.set(id, recordAfter(recorded, fence, outcome));
      this.observe({ sink: name, mode, key, fence, outcome, late, atMs });
    }
  }
}

/** The sinks every simulated world has. */
export const WORLD_SINKS: { name: string; mode: EffectMode }[] = [
  { name: 'database', mode: 'once' },
  { name: 'service', mode: 'latest' },
];
