import { sql } from 'drizzle-orm';
import { NotFoundError, type JobRow, type LeaderToken, type ResultRow } from '@fenceline/core';
import { array, firstRow, rows, type Executor } from './db';
import { leadCte, selectWithLead, writtenRows } from './lead';
import { isId, jobFromRow, resultFromRow, toId } from './rows';

function ids(jobIds: string[]): string[] {
  return jobIds.filter(isId);
}

/** waiting -> ready for the given jobs of the token's shard; returns the ids it moved. */
export async function promoteJobs(db: Executor, token: LeaderToken, jobIds: string[]): Promise<string[]> {
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        w as (
          update jobs set state = 'ready', ready_at = now()
          where id = any(${array(ids(jobIds), 'bigint')}) and shard = ${token.shard} and state = 'waiting'
            and exists (select 1 from lead)
          returning id
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'promoteJobs').map((r) => toId(r.id));
}

/** waiting | ready -> upstream_failed (a dependency failed); returns the ids it moved. */
export async function markUpstreamFailed(db: Executor, token: LeaderToken, jobIds: string[]): Promise<string[]> {
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        w as (
          update jobs set state = 'upstream_failed', ended_at = now()
          where id = any(${array(ids(jobIds), 'bigint')}) and shard = ${token.shard} and state in ('waiting', 'ready')
            and exists (select 1 from lead)
          returning id
        )
        ${selectWithLead('id')}`,
  );
  return writtenRows(result, token, 'markUpstreamFailed').map((r) => toId(r.id));
}

export async function listJobs(db: Executor, runId: string): Promise<JobRow[]> {
  if (!isId(runId)) return [];
  const result = await rows(db, sql`select * from jobs where run_id = ${runId} order by id`);
  return result.map(jobFromRow);
}

export async function getJob(db: Executor, jobId: string): Promise<JobRow> {
  const row = isId(jobId) ? await firstRow(db, sql`select * from jobs where id = ${jobId}`) : undefined;
  if (!row) throw new NotFoundError(`job ${jobId} does not exist`, { jobId });
  return jobFromRow(row);
}

export async function getResult(db: Executor, jobId: string): Promise<ResultRow | null> {
  if (!isId(jobId)) return null;
  const row = await firstRow(db, sql`select * from results where job_id = ${jobId}`);
  return row ? resultFromRow(row) : null;
}

/** Jobs currently leased, optionally to one worker (by the partial index on holder). */
export async function listLeasedJobs(db: Executor, workerId?: string): Promise<JobRow[]> {
  const result = await rows(
    db,
    sql`select * from jobs where state = 'leased' ${workerId === undefined ? sql`` : sql`and holder = ${workerId}`} order by id`,
  );
  return result.map(jobFromRow);
}
