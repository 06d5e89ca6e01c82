import { type SimReplay } from './replay-model';
import { SHOWN_STATES, STATE_CODE } from '@/lib/shown-states';

/**
 * A replay's transitions as parallel typed arrays, built once per replay, so that the state
 * of every task at any moment is one pass over small integers: about a millisecond for the
 * 50,000 transitions a replay holds at most, which keeps scrubbing and playback smooth.
 */
export interface Timeline {
  replay: SimReplay;
  taskIndex: Map<string, number>;
  times: Float64Array;
  run: Int32Array;
  task: Int32Array;
  state: Uint8Array;
  /** 1 for a lease expiry, 2 for a hand-back, 0 for anything else. */
  cause: Uint8Array;
  /** Where the slider starts: when the first run started and its jobs exist (the simulation's start if none did). */
  startMs: number;
  endMs: number;
}

export function compileTimeline(replay: SimReplay): Timeline {
  const taskIndex = new Map(replay.tasks.map((t, i) => [t.id, i]));
  const runIndex = new Map(replay.runs.map((r, i) => [r.runId, i]));
  const n = replay.transitions.length;
  const times = new Float64Array(n);
  const run = new Int32Array(n);
  const task = new Int32Array(n);
  const state = new Uint8Array(n);
  const cause = new Uint8Array(n);
  replay.transitions.forEach((t, i) => {
    times[i] = t.atMs;
    run[i] = runIndex.get(t.runId) ?? -1;
    task[i] = taskIndex.get(t.taskId) ?? -1;
    state[i] = STATE_CODE[t.state];
    cause[i] = t.cause === 'expired' ? 1 : t.cause === 'handed-back' ? 2 : 0;
  });
  return { replay, taskIndex, times, run, task, state, cause, startMs: replay.runs[0]?.startedAtMs ?? replay.runs[0]?.createdAtMs ?? 0, endMs: replay.endMs };
}

/** What the DAG looks like at one moment of virtual time. */
export interface Moment {
  atMs: number;
  /** The run on show: the last one started by then, else the first one. */
  runIndex: number | null;
  /** A state code per task (see STATE_CODE). */
  states: Uint8Array;
  /** Per task, the index of its latest transition by then (-1: none yet), for the holder and attempt. */
  latest: Int32Array;
  /** Tasks per state, in SHOWN_STATES order. */
  counts: number[];
  /** For the run on show, up to this moment. */
  expired: number;
  handedBack: number;
  refused: number;
  /** False past the point where the recording hit its cap: the states shown are the last recorded. */
  exact: boolean;
}

/** The number of transitions at or before `atMs` (they are in time order). */
function countUpTo(times: Float64Array, atMs: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (times[mid]! <= atMs) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function runOnShow(replay: SimReplay, atMs: number): number | null {
  if (replay.runs.length === 0) return null;
  let shown = 0;
  replay.runs.forEach((r, i) => {
    if (r.startedAtMs !== null && r.startedAtMs <= atMs) shown = i;
  });
  return shown;
}

export function momentAt(tl: Timeline, atMs: number): Moment {
  const { replay } = tl;
  const tasks = replay.tasks.length;
  const states = new Uint8Array(tasks);
  const latest = new Int32Array(tasks).fill(-1);
  const runIndex = runOnShow(replay, atMs);
  const k = countUpTo(tl.times, atMs);
  let expired = 0;
  let handedBack = 0;
  if (runIndex !== null) {
    for (let i = 0; i < k; i++) {
      if (tl.run[i] !== runIndex) continue;
      const task = tl.task[i]!;
      if (task < 0) continue;
      states[task] = tl.state[i]!;
      latest[task] = i;
      if (tl.cause[i] === 1) expired++;
      else if (tl.cause[i] === 2) handedBack++;
    }
  }
  const run = runIndex === null ? null : replay.runs[runIndex]!;
  const cut = replay.truncatedAtMs;
  let exact = cut === null || atMs < cut;
  // The recording keeps every job's end state apart from its capped transitions, so the
  // very end is right even when the middle of a long run is missing.
  if (!exact && run && atMs >= replay.endMs) {
    run.endStates.forEach((s, task) => {
      states[task] = STATE_CODE[s ?? 'none'];
    });
    exact = true;
  }
  const counts = SHOWN_STATES.map(() => 0);
  for (const code of states) counts[code]!++;
  const refused = run ? replay.refusals.filter((r) => r.runId === run.runId && r.atMs <= atMs).length : 0;
  return { atMs, runIndex, states, latest, counts, expired, handedBack, refused, exact };
}
