import { sql, type SQL } from 'drizzle-orm';
import { fencedWriteRefusal, type FenceRecord, type FencelineError } from '@fenceline/core';
import { type LeaseRef } from '@fenceline/core/store';
import { array, rows, type Executor } from './db';
import { isId, toId, toNumber } from './rows';

/**
 * The fencing rules shared by every worker write. A write lands only on a live lease that
 * carries exactly the fence on record for this holder; anything else is refused, and the
 * refusal is classified from the job as it is now (fencedWriteRefusal in @fenceline/core,
 * the rule the memory store applies too) so the node can say why.
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

/** Reads the fence state of jobs whose fenced write was refused, to say why (fencedWriteRefusal in @fenceline/core). */
export async function fenceStates(db: Executor, jobIds: string[]): Promise<Map<string, FenceRecord>> {
  const found = new Map<string, FenceRecord>();
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

/** Classifies the refusal of one fenced write with a fresh read of the job. */
export async function refuse(db: Executor, ref: LeaseRef, operation: string): Promise<FencelineError> {
  const states = await fenceStates(db, [ref.jobId]);
  return fencedWriteRefusal(ref, states.get(ref.jobId), operation);
}
