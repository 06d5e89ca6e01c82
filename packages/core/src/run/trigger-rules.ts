/**
 * When a task may run, given how its dependencies ended (docs/architecture.md, "Trigger
 * rules"). A task's rule is judged every time one of its dependencies ends:
 * - all_success (the default): runs once every dependency succeeded; upstream_failed as
 *   soon as one failed, could not run or was cancelled; skipped when one was skipped;
 * - all_done: runs once every dependency ended, however (clean-up tasks);
 * - none_failed: runs once every dependency ended and none failed or was cancelled
 *   (skipped ones are fine); upstream_failed as soon as one failed;
 * - one_failed: runs as soon as one dependency failed (or could not run); skipped once
 *   every dependency ended without one failing (alerting tasks);
 * - one_success: runs as soon as one dependency succeeded; once every dependency ended
 *   with none succeeding, upstream_failed if one failed, else skipped.
 * A task without dependencies runs at once, whatever its rule.
 */
export const TRIGGER_RULES = ['all_success', 'all_done', 'none_failed', 'one_failed', 'one_success'] as const;
export type TriggerRule = (typeof TRIGGER_RULES)[number];

/** How a task's dependencies have ended so far. */
export interface DepTally {
  total: number;
  succeeded: number;
  /** failed or upstream_failed. */
  failed: number;
  skipped: number;
  cancelled: number;
  /** Ended in any way (the four above). */
  done: number;
}

/** wait: not yet decidable; run: make it ready; doom: upstream_failed; skip: skipped. */
export type Verdict = 'wait' | 'run' | 'doom' | 'skip';

export function judge(rule: TriggerRule, t: DepTally): Verdict {
  if (t.total === 0) return 'run';
  const allDone = t.done === t.total;
  switch (rule) {
    case 'all_success':
      if (t.failed > 0 || t.cancelled > 0) return 'doom';
      if (t.skipped > 0) return 'skip';
      return t.succeeded === t.total ? 'run' : 'wait';
    case 'all_done':
      return allDone ? 'run' : 'wait';
    case 'none_failed':
      if (t.failed > 0 || t.cancelled > 0) return 'doom';
      return allDone ? 'run' : 'wait';
    case 'one_failed':
      if (t.failed > 0) return 'run';
      return allDone ? 'skip' : 'wait';
    case 'one_success':
      if (t.succeeded > 0) return 'run';
      if (!allDone) return 'wait';
      return t.failed > 0 || t.cancelled > 0 ? 'doom' : 'skip';
  }
}
