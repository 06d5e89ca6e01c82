import type { RunActionKind, RunActionRow } from '../store/run-actions';

/**
 * The numbers of a job's attempts as a person reads them. A job's `attempt` counts against
 * its retry budget, and a clear (or a retry from failure) starts that budget again at 0, so
 * the budget's number repeats across clears. The attempts a person sees are numbered through
 * the job's whole life instead, 1, 2, 3 ..., and each clear is named where it fell: the
 * attempts after it are the ones it asked for, and who asked is on record.
 */

/** A clear that reset a task's retry budget: an applied action that moved the task back to waiting. */
export interface ClearMark {
  actionId: string;
  kind: RunActionKind;
  by: string;
  at: Date;
  reason: string | null;
}

/** The clears of one task among a run's actions, oldest first. */
export function clearsOfTask(actions: readonly RunActionRow[], taskId: string): ClearMark[] {
  const marks: ClearMark[] = [];
  for (const a of actions) {
    if (a.state !== 'applied' || a.appliedAt === null || !a.result) continue;
    if (!a.result.changed.some((c) => c.taskId === taskId && c.to === 'waiting')) continue;
    marks.push({ actionId: a.id, kind: a.kind, by: a.requestedBy, at: a.appliedAt, reason: a.reason });
  }
  return marks.sort((x, y) => x.at.getTime() - y.at.getTime());
}

/** An attempt with its number in the job's life and, for the first attempt after a clear, that clear. */
export type Numbered<T> = T & { number: number; afterClear: ClearMark | null };

/**
 * Numbers attempts given in the order they were granted, 1 for the first, and marks the first
 * attempt granted after each clear with it (several clears with no attempt between them: the
 * latest). A clear after the last attempt marks nothing; `pendingClear` returns it.
 */
export function numberAttempts<T extends { grantedAt: Date }>(attempts: readonly T[], clears: readonly ClearMark[]): Numbered<T>[] {
  let next = 0;
  return attempts.map((a, i) => {
    let mark: ClearMark | null = null;
    while (next < clears.length && clears[next]!.at.getTime() <= a.grantedAt.getTime()) mark = clears[next++]!;
    return { ...a, number: i + 1, afterClear: mark };
  });
}

/** The latest clear after the last attempt, if the job has not been leased since it. */
export function pendingClear(attempts: readonly { grantedAt: Date }[], clears: readonly ClearMark[]): ClearMark | null {
  const last = attempts[attempts.length - 1]?.grantedAt.getTime() ?? -Infinity;
  const after = clears.filter((c) => c.at.getTime() > last);
  return after[after.length - 1] ?? null;
}

/** How the attempts of a job read in one line: "3 in all; retry budget 1 of 2 since the clear by alice". */
export function attemptsText(input: { seen: number; attempt: number; maxAttempts: number; lastClear: ClearMark | null }): string {
  const budget = `${input.attempt} of ${input.maxAttempts}`;
  if (input.lastClear === null) return input.seen === input.attempt ? budget : `${input.seen} in all; retry budget ${budget}`;
  return `${input.seen} in all; retry budget ${budget} since the ${input.lastClear.kind === 'retry_failed' ? 'retry from failure' : 'clear'} by ${input.lastClear.by}`;
}
