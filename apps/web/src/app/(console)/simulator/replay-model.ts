/**
 * The replay of one DAG as the simulator's Web Worker posts it (DagReplay in
 * packages/sim/src/report/replay.ts). Declared here rather than imported, like the rest of
 * the report, so the page's bundle never reaches into the simulator; sim.worker.ts assigns
 * the simulator's value to this type, so the compiler notices when the two drift apart.
 */

export type ReplayState = 'waiting' | 'ready' | 'leased' | 'succeeded' | 'failed' | 'upstream_failed' | 'skipped' | 'cancelled';

export interface SimReplay {
  dagId: string;
  tasks: { id: string; type: string; dependsOn: string[] }[];
  runs: {
    runId: string;
    trigger: 'schedule' | 'manual' | 'backfill' | 'rerun';
    createdAtMs: number;
    startedAtMs: number | null;
    endedAtMs: number | null;
    state: string;
    endStates: (ReplayState | null)[];
  }[];
  transitions: { atMs: number; runId: string; taskId: string; state: ReplayState; cause: string; workerId: string | null; fence: number; attempt: number }[];
  refusals: { atMs: number; runId: string; taskId: string; workerId: string; fence: number; operation: string; code: string }[];
  endMs: number;
  limits: { maxTransitions: number; maxRefusals: number; maxJobs: number };
  dropped: { transitions: number; refusals: number; runs: number };
  truncatedAtMs: number | null;
}
