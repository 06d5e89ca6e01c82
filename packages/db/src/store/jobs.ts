import { sql, type SQL } from 'drizzle-orm';
import { checkJobsPerRead, NotFoundError, type DeposedLeaderError, type JobId, type JobRow, type ResultRow, checkLogChunksQuery, LOG_CHUNKS_DEFAULT_LIMIT } from '@fenceline/core';
import { type LeaderGroup, type AttemptRow, type LogChunkRow, type LogChunksQuery } from '@fenceline/core/store';
import { array, firstRow, rows, type Executor } from './db';
import { firstOccurrences, leadManyCte, ledGroups, perGroup, selectWithLeadMany } from './lead';
import { attemptFromRow, logChunkFromRow, isId, jobFromRow, resultFromRow, toJobId } from './rows';

/**
 * Moves jobs of one or more leaders' shards from one of `from` to `to` in one statement;
 * per group, the ids it moved. A job outside its group's shard, or of a group that failed
 * its lead check, does not move; a job named twice moves once.
 */
async function moveJobsAcross(db: Executor, groups: LeaderGroup<JobId>[], operation: string, from: string[], set: SQL): Promise<(JobId[] | DeposedLeaderError)[]> {
  if (groups.length === 0) return [];
  const tokens = groups.map((g) => g.token);
  const first = firstOccurrences(groups, (id) => id, isId);
  const result = await rows(
    db,
    sql`with ${leadManyCte(tokens)},
        i as (select * from unnest(${array([...first.keys()], 'bigint')}, ${array(
          [...first.values()].map((f) => f.g + 1),
          'int',
        )}) as i(id, g)),
        w as (
          update jobs j set ${set}
          from i join lead on lead.g = i.g
          where j.id = i.id and j.shard = lead.shard and j.state = any(${array(from, 'text')})
          returning j.id, i.g
        )
        ${selectWithLeadMany()}`,
  );
  const moved: JobId[][] = groups.map(() => []);
  for (const r of result) if (r.id !== null && r.id !== undefined) moved[Number(r.g) - 1]!.push(toJobId(r.id));
  return perGroup(tokens, ledGroups(result), operation, (g) => moved[g]!);
}

/** waiting -> ready for the given jobs of each group's shard. */
export function promoteJobsAcross(db: Executor, groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
  return moveJobsAcross(db, groups, 'promoteJobs', ['waiting'], sql`state = 'ready', ready_at = now()`);
}

/** waiting | ready -> upstream_failed (a dependency failed) for the given jobs of each group's shard. */
export function markUpstreamFailedAcross(db: Executor, groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
  return moveJobsAcross(db, groups, 'markUpstreamFailed', ['waiting', 'ready'], sql`state = 'upstream_failed', ended_at = now()`);
}

/** waiting -> skipped (a trigger rule that can no longer be met) for the given jobs of each group's shard. */
export function markSkippedAcross(db: Executor, groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
  return moveJobsAcross(db, groups, 'markSkipped', ['waiting'], sql`state = 'skipped', ended_at = now()`);
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

export async function getJobs(db: Executor, jobIds: JobId[]): Promise<JobRow[]> {
  checkJobsPerRead(jobIds);
  const ids = jobIds.filter(isId);
  if (ids.length === 0) return [];
  const result = await rows(db, sql`select * from jobs where id = any(${array(ids, 'bigint')}) order by id`);
  return result.map(jobFromRow);
}

export async function getResult(db: Executor, jobId: string): Promise<ResultRow | null> {
  if (!isId(jobId)) return null;
  const row = await firstRow(db, sql`select * from results where job_id = ${jobId}`);
  return row ? resultFromRow(row) : null;
}

/** Every job's result of one run, in one read: by the (run_id, task_id) key of jobs and the results' primary key. */
export async function listRunResults(db: Executor, runId: string): Promise<ResultRow[]> {
  if (!isId(runId)) return [];
  const result = await rows(db, sql`select r.* from jobs j join results r on r.job_id = j.id where j.run_id = ${runId} order by j.id`);
  return result.map(resultFromRow);
}

/** Every attempt of the job that wrote a result, by its primary key (job_id, fence). */
export async function listAttempts(db: Executor, jobId: string): Promise<AttemptRow[]> {
  if (!isId(jobId)) return [];
  const result = await rows(db, sql`select * from job_attempts where job_id = ${jobId} order by fence`);
  return result.map(attemptFromRow);
}

/** A running attempt's streamed log lines after `afterSeq`, by the primary key (job_id, fence, seq). */
export async function listLogChunks(db: Executor, query: LogChunksQuery): Promise<LogChunkRow[]> {
  checkLogChunksQuery(query);
  if (!isId(query.jobId)) return [];
  const result = await rows(
    db,
    sql`select * from job_log_chunks where job_id = ${query.jobId} and fence = ${query.fence} and seq > ${query.afterSeq ?? 0} order by seq limit ${query.limit ?? LOG_CHUNKS_DEFAULT_LIMIT}`,
  );
  return result.map(logChunkFromRow);
}

/** Jobs currently leased, optionally to one worker (by the partial index on holder). */
export async function listLeasedJobs(db: Executor, workerId?: string): Promise<JobRow[]> {
  const result = await rows(db, sql`select * from jobs where state = 'leased' ${workerId === undefined ? sql`` : sql`and holder = ${workerId}`} order by id`);
  return result.map(jobFromRow);
}
