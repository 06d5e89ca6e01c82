/**
 * The replay of one DAG as the simulator's Web Worker posts it (DagReplay in
 * packages/sim/src/report/replay.ts). Declared here rather than imported, like the rest of
 * the report, so the page's bundle never reaches into the simulator; sim.worker.ts assigns
 * the simulator's value to this type, so the compiler notices when the two drift apart.
 */

export type ReplayState = 'waiting' | 'ready' | 'leased' | 'succeeded' | 'failed' | 'upstream_failed' | 'cancelled';

export interface SimReplay {
  dagId: string;
  tasks: { id: string; type: string; dependsOn: string[] }[];
  runs: {
    runId: string;
    trigger: 'schedule' | 'manual';
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

/**
 * The states a node can show, in legend order. 'none' is a task whose job the run has not
 * created yet (or a moment before the run started).
 */
export const SHOWN_STATES = ['none', 'waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'cancelled'] as const;
export type ShownState = (typeof SHOWN_STATES)[number];

/** States as small integers, so a 10,000-task run is one typed array per moment. */
export const STATE_CODE: Record<ShownState, number> = Object.fromEntries(SHOWN_STATES.map((s, i) => [s, i])) as Record<ShownState, number>;

export function stateOf(code: number): ShownState {
  return SHOWN_STATES[code] ?? 'none';
}
