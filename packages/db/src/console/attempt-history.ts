import { sql } from 'drizzle-orm';
import { clearsOfTask, type ClearMark, type JobRow, type RunId } from '@fenceline/core';
import { listRunActions } from '../store/run-actions';
import { num, query, strOrNull, type ConsoleDb } from './sql';

/** A job's attempts as a person counts them: how many it had in its whole life, and the last clear that reset its retry budget. */
export interface AttemptHistory {
  seen: number;
  lastClear: ClearMark | null;
}

/**
 * The attempt history of every job of a run, in two reads (the run's lease grants from the
 * event log, by the run index, and the run's actions), for the CLI and the API, which print
 * the same count the run page shows: attempts through the job's life, apart from the retry
 * budget a clear resets.
 */
export async function attemptHistory(db: ConsoleDb, runId: RunId, jobs: readonly Pick<JobRow, 'id' | 'taskId' | 'attempt'>[]): Promise<Map<string, AttemptHistory>> {
  const [grants, actions] = await Promise.all([
    query(db, sql`select job_id, count(*) as n from events where run_id = ${runId} and type = 'lease:granted' group by job_id`),
    listRunActions(db, runId),
  ]);
  const seenBy = new Map(grants.map((g) => [strOrNull(g.job_id) ?? '', num(g.n)]));
  const out = new Map<string, AttemptHistory>();
  for (const j of jobs) {
    const clears = clearsOfTask(actions, j.taskId);
    // A grant whose event was lost in a crash still counted on the job: never show fewer than the budget's count.
    out.set(j.id, { seen: Math.max(seenBy.get(j.id) ?? 0, j.attempt), lastClear: clears.at(-1) ?? null });
  }
  return out;
}
