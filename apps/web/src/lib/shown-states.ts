/**
 * How a task's job state is shown wherever the console draws a DAG (the DAG and run pages,
 * the simulator's replay): the states in legend order, their small-integer codes, and the
 * state a group of tasks shows from its counts per state.
 */

/**
 * The states a node can show, in legend order. 'none' is a task whose job the run has not
 * created yet (or a moment before the run started).
 */
export const SHOWN_STATES = ['none', 'waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'cancelled', 'skipped'] as const;
export type ShownState = (typeof SHOWN_STATES)[number];

/** States as small integers, so a 10,000-task run is one typed array per moment. */
export const STATE_CODE: Record<ShownState, number> = Object.fromEntries(SHOWN_STATES.map((s, i) => [s, i])) as Record<ShownState, number>;

export function stateOf(code: number): ShownState {
  return SHOWN_STATES[code] ?? 'none';
}

/** One node's state: its own, or for a group the state every member shares ('mixed' when they differ). */
export function summaryState(counts: readonly number[]): ShownState | 'mixed' {
  const present = counts.flatMap((c, i) => (c > 0 ? [SHOWN_STATES[i]!] : []));
  return present.length === 1 ? present[0]! : present.length === 0 ? 'none' : 'mixed';
}
