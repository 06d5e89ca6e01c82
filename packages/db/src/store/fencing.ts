import { sql, type SQL } from 'drizzle-orm';
import { ForgedFenceError, LeaseLostError, NotFoundError, StaleFenceError, type FencelineError, type LeaseRef } from '@fenceline/core';
import { array, rows, type Executor } from './db';
import { isId, toId, toNumber } from './rows';

/**
 * The fencing rules shared by every worker write. A write lands only on a live lease that
 * carries exactly the fence on record for this holder; anything else is refused, and the
 * refusal is classified from the job as it is now so the worker learns why.
 */

/** The conditions of a fenced write on `jobs` (alias `j` when given). */
export function fencedWhere(ref: LeaseRef, alias = ''): SQL {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  return sql`${c('id')} = ${ref.jobId} and ${c('fence')} = ${ref.fence} and ${c('holder')} = ${ref.workerId}
    and ${c('state')} = 'leased' and ${c('lease_expires_at')} > now() and ${sessionHolds(sql`${ref.session}::text`, alias)}`;
}

/**
 * The fenced join of a batch write: the batch `r` (job_id, fence, worker_id, session) joined
 * to the jobs `j` it names, keeping only live leases that carry exactly that fence for that
 * holder and session, as fencedWhere does for one write. The caller may add conditions.
 */
export function fencedBatchJoin(): SQL {
  return sql`r join jobs j on j.id = r.job_id and j.fence = r.fence and j.holder = r.worker_id
            where j.state = 'leased' and j.lease_expires_at > now() and ${sessionHolds(sql`r.session`, 'j')}`;
}

/**
 * The session check of a fenced write, for a session value (a parameter or a column of
 * the batch): the lease was granted to that session and it is still its holder's current
 * one, so a worker that registered anew (a restarted process) has made every write of
 * its old session fail. A null session is the node's own hand-back of a lease it granted
 * and never delivered.
 */
export function sessionHolds(session: SQL, alias = ''): SQL {
  const c = (column: string) => sql.raw(alias ? `${alias}.${column}` : column);
  return sql`(${session} is null or (${c('holder_session')} = ${session}
    and exists (select 1 from workers wk where wk.id = ${c('holder')} and wk.session = ${session})))`;
}

/**
 * The retry delay min(base * 2^(attempt - 1), max) in the store's clock, the same formula
 * as retryBackoffMs in @fenceline/core; `attempt` is the attempt that just ended. Column
 * references in an UPDATE's SET read the row as it was, which is what this wants.
 */
export const BACKOFF_INTERVAL = sql`(case when retry_backoff_ms <= 0 then 0
  else least(retry_backoff_ms::float8 * power(2::float8, greatest(attempt, 1) - 1), retry_backoff_max_ms::float8) end
  * interval '1 millisecond')`;

export interface JobFenceState {
  fence: number;
  holder: string | null;
  state: string;
  live: boolean;
  /** The session the lease was granted to, and its holder's current session. */
  holderSession: string | null;
  currentSession: string | null;
}

/** Reads the fence state of jobs whose fenced write was refused, to say why. */
export async function fenceStates(db: Executor, jobIds: string[]): Promise<Map<string, JobFenceState>> {
  const found = new Map<string, JobFenceState>();
  const valid = jobIds.filter(isId);
  if (valid.length === 0) return found;
  const result = await rows(
    db,
    sql`select j.id, j.fence, j.holder, j.state, coalesce(j.lease_expires_at > now(), false) as live, j.holder_session, wk.session as current_session
        from jobs j left join workers wk on wk.id = j.holder where j.id = any(${array(valid, 'bigint')})`,
  );
  for (const r of result) {
    found.set(toId(r.id), {
      fence: toNumber(r.fence),
      holder: (r.holder as string | null) ?? null,
      state: String(r.state),
      live: r.live === true,
      holderSession: (r.holder_session as string | null) ?? null,
      currentSession: (r.current_session as string | null) ?? null,
    });
  }
  return found;
}

/**
 * Why a fenced write was refused: no such job; a lower fence than on record (its lease was
 * superseded: stale); a higher one than was ever issued (forged); or the right fence on a
 * lease that is no longer live, held by another worker or by another session of this one
 * (lost, with `details.cause` saying which). These precise reasons are for the node's
 * event log and metrics; the worker is answered without them (node/refusals.ts).
 */
export function refusal(ref: LeaseRef, current: JobFenceState | undefined, operation: string): FencelineError {
  const base = { jobId: ref.jobId, fence: ref.fence, workerId: ref.workerId, operation };
  if (!current) return new NotFoundError(`${operation} refused: job ${ref.jobId} does not exist`, { ...base, recordFence: null });
  const details = { ...base, recordFence: current.fence, holder: current.holder, state: current.state };
  if (ref.fence < current.fence) {
    return new StaleFenceError(`${operation} refused: fence ${ref.fence} of job ${ref.jobId} is stale (the record is at ${current.fence})`, details);
  }
  if (ref.fence > current.fence) {
    return new ForgedFenceError(`${operation} refused: fence ${ref.fence} of job ${ref.jobId} was never issued (the record is at ${current.fence})`, details);
  }
  const oldSession = ref.session !== null && (current.holderSession !== ref.session || current.currentSession !== ref.session);
  const [cause, why] =
    current.state !== 'leased'
      ? ['ended', `the job is ${current.state}`]
      : current.holder !== ref.workerId
        ? ['foreign-holder', `it is held by ${current.holder}`]
        : oldSession
          ? ['old-session', 'the lease belongs to another session of this worker']
          : ['expired', 'the lease expired'];
  return new LeaseLostError(`${operation} refused: worker ${ref.workerId} no longer holds job ${ref.jobId}: ${why}`, { ...details, cause });
}

/** Classifies the refusal of one fenced write with a fresh read of the job. */
export async function refuse(db: Executor, ref: LeaseRef, operation: string): Promise<FencelineError> {
  const states = await fenceStates(db, [ref.jobId]);
  return refusal(ref, states.get(ref.jobId), operation);
}
