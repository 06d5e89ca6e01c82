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
 * The attempt history of every job of a run, in two reads (the run's attempts, and the run's
 * actions), for the CLI and the API, which print the same count the run page shows:
 * attempts through the job's life, apart from the retry budget a clear resets.
 *
 * An attempt is a fence the job was leased under, counted once however many records name
 * it: its grant in the event log, the result it wrote (job_attempts), or the live lease.
 * The event log alone is not enough: a node killed before its buffered events were written
 * loses their grants, while a result is written in the statement that accepts it.
 */
export async function attemptHistory(db: ConsoleDb, runId: RunId, jobs: readonly Pick<JobRow, 'id' | 'taskId' | 'attempt'>[]): Promise<Map<string, AttemptHistory>> {
  const [grants, actions] = await Promise.all([
    query(
      db,
      sql`select job_id, count(distinct fence) as n from (
            select job_id, fence from events where run_id = ${runId} and type = 'lease:granted'
            union all
            select a.job_id, a.fence from job_attempts a join jobs j on j.id = a.job_id where j.run_id = ${runId}
            union all
            select id, fence from jobs where run_id = ${runId} and state = 'leased'
          ) leased_under group by job_id`,
    ),
    listRunActions(db, runId),
  ]);
  const seenBy = new Map(grants.map((g) => [strOrNull(g.job_id) ?? '', num(g.n)]));
  const out = new Map<string, AttemptHistory>();
  for (const j of jobs) {
    const clears = clearsOfTask(actions, j.taskId);
    // Never fewer than the budget's count, which counts attempts since the last clear.
    out.set(j.id, { seen: Math.max(seenBy.get(j.id) ?? 0, j.attempt), lastClear: clears.at(-1) ?? null });
  }
  return out;
}
