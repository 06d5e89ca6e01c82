import { sql } from 'drizzle-orm';
import { fencedWriteRefusal, LIMITS, lendsAny, storableLog } from '@fenceline/core';
import type { DeposedLeaderError } from '@fenceline/core';
import type { Grant, GrantedLease, LeaderToken, LeaseRef, RenewOutcome, RenewRef, SweptJob } from '@fenceline/core/store';
import { array, msInterval, rows, type Db, type Executor, type RawRow } from './db';
import { lockLimits } from './resources';
import { withoutRefusedLends } from './lending';
import { BACKOFF_INTERVAL, fenceStates, fencedBatchJoin } from './fencing';
import { leadCte, leadManyCte, ledGroups, perGroup, selectWithLead, selectWithLeadMany, writtenRows } from './lead';
import { isId, toDagId, toDate, toDateOrNull, toJobId, toNumber, toRunId, toWorkerId, toWorkerIdOrNull } from './rows';

function grantedFromRow(r: RawRow): GrantedLease {
  return {
    jobId: toJobId(r.id),
    runId: toRunId(r.run_id),
    dagId: toDagId(r.dag_id),
    taskId: String(r.task_id),
    workerId: toWorkerId(r.holder),
    fence: toNumber(r.fence),
    attempt: toNumber(r.attempt),
    leasedAt: toDate(r.leased_at),
    leaseExpiresAt: toDate(r.lease_expires_at),
  };
}

/**
 * Grants batches of leases for the shards of one or more leaders in one statement (one
 * commit for a whole dispatch round of a node that leads many shards; docs/architecture.md, rule 1).
 * A job moves ready -> leased only if it is still ready, its backoff has passed, it
 * belongs to the shard of the token its grant came with and that token still leads; in
 * the same statement its fence and attempt go up by one and the holder and expiry (store
 * clock) are written. A token whose check failed gets its DeposedLeaderError while the
 * others' grants stand. The `locked` CTE takes the row locks in id order, so two batches
 * that overlap cannot deadlock; a concurrent grant of the same job waits for the lock and
 * then finds it leased. A job named twice is granted once, to the first grant that names
 * it within its own shard (a grant naming a job of another shard cannot shadow it).
 *
 * Every join reaches jobs by primary key, one probe per grant: the statement costs the
 * same whatever the size of the jobs table, and the update carries each job's grant from
 * `locked` rather than searching the grant list per row.
 */
export async function grantLeasesMany(db: Db, items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
  if (items.length === 0) return [];
  // Jobs that consume resource limits are granted only under the limits' lock, and lent
  // leases only under their pools' lending locks; a round with neither (nearly every round)
  // is the one statement it always was.
  const limited = items.some((i) => i.grants.some((g) => g.limited === true));
  const lending = items.some((i) => lendsAny(i.grants));
  if (!limited && !lending) return grantStatement(db, items, ttlMs, false);
  return db.transaction(async (tx) => {
    // The lending locks come first and the limits' second, on every path, so no two grants deadlock.
    const batch = lending ? await withoutRefusedLends(tx, items) : items;
    if (limited) await lockLimits(tx);
    return grantStatement(tx, batch, ttlMs, limited);
  });
}

/** The holds of the leases just granted, under their new fence (a job's earlier hold is replaced). */
const HOLDS = sql`,
        holds as (
          insert into resource_holds (job_id, name, fence, units)
          select w.id, k.name, w.fence, k.units::int from w cross join lateral jsonb_each_text(w.resources) as k(name, units) where w.resources is not null
          on conflict (job_id, name) do update set fence = excluded.fence, units = excluded.units
        )`;

/**
 * Jobs of `locked` that may not be granted for their resource limits: every (job, limit) a
 * grant asks for, with the units asked by this grant and the grants before it in the batch
 * for that limit (so the batch's grants never add up past a capacity), against the units
 * live leases hold. A job is refused if any of its limits is missing or would overflow. The
 * running sum counts grants that are refused for another limit too, so a batch may grant
 * fewer than would fit, never more.
 */
const OVER_LIMIT = sql`,
        asked as (
          select l.id, l.ord, k.name, k.units::int as units from locked l cross join lateral jsonb_each_text(l.resources) as k(name, units)
          where l.resources is not null
        ),
        held as (
          select h.name, sum(h.units)::bigint as used from resource_holds h join jobs j on j.id = h.job_id and j.state = 'leased' and j.fence = h.fence group by h.name
        ),
        upto as (select a.id, a.name, sum(a.units) over (partition by a.name order by a.ord, a.id) as units from asked a),
        over_limit as (
          select distinct u.id from upto u left join resource_limits rl on rl.name = u.name left join held h on h.name = u.name
          where rl.capacity is null or coalesce(h.used, 0) + u.units > rl.capacity
        )`;

/** The grant statement itself (see grantLeasesMany); with `limited`, inside the limits' lock, so it may grant limited jobs. */
async function grantStatement(db: Executor, items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number, limited: boolean): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
  const tokens = items.map((i) => i.token);
  const flat = items.flatMap((item, g) => item.grants.filter((x) => isId(x.jobId)).map((x) => ({ ...x, g: g + 1 })));
  const result = await rows(
    db,
    sql`with ${leadManyCte(tokens)},
        g as (
          select distinct on (g0.job_id) g0.job_id, g0.worker_id, g0.g, g0.ord, lead.shard
          from unnest(${array(
            flat.map((x) => x.jobId),
            'bigint',
          )}, ${array(
            flat.map((x) => x.workerId),
            'text',
          )}, ${array(
            flat.map((x) => x.g),
            'int',
          )})
            with ordinality as g0(job_id, worker_id, g, ord)
          join lead on lead.g = g0.g
          -- The LIMIT keeps this a primary-key probe per grant rather than a join the
          -- planner may turn into a scan of every job.
          cross join lateral (select j0.shard from jobs j0 where j0.id = g0.job_id limit 1) x
          where x.shard = lead.shard
          order by g0.job_id, g0.ord
        ),
        -- A lease is granted to the worker's current session (rule 5). A worker that never
        -- registered has none: its lease can be written only by the node itself.
        locked as materialized (
          select j.id, g.worker_id, g.ord, wk.session, j.resources from g join jobs j on j.id = g.job_id
          left join workers wk on wk.id = g.worker_id
          where j.shard = g.shard and j.state = 'ready' and (j.next_attempt_at is null or j.next_attempt_at <= now())
          ${limited ? sql`` : sql`and j.resources is null`}
          order by j.id
          for update of j
        )${limited ? OVER_LIMIT : sql``},
        w as (
          update jobs j set state = 'leased', fence = j.fence + 1, attempt = j.attempt + 1, holder = l.worker_id, holder_session = l.session,
            lease_expires_at = now() + ${msInterval(ttlMs)}, leased_at = now(), renewed_at = null, next_attempt_at = null
          from locked l
          where j.id = l.id ${limited ? sql`and l.id not in (select id from over_limit)` : sql``}
          returning j.id, j.shard, j.run_id, j.dag_id, j.task_id, j.holder, j.fence, j.attempt, j.leased_at, j.lease_expires_at, l.ord, j.resources
        )${limited ? HOLDS : sql``}
        ${selectWithLeadMany()} order by w.ord`,
  );
  const byShard = new Map<number, GrantedLease[]>();
  for (const r of result) {
    if (r.id === null || r.id === undefined) continue;
    const shard = toNumber(r.shard);
    const list = byShard.get(shard) ?? [];
    list.push(grantedFromRow(r));
    byShard.set(shard, list);
  }
  return perGroup(tokens, ledGroups(result), 'grantLeases', (g) => byShard.get(tokens[g]!.shard) ?? []);
}

/**
 * Appends the log lines renewals carry, chained to the items that passed every check
 * (`locked`, by their position) and the rows the renewal updated (`w`), so a refused
 * renewal appends nothing, even when it names a job another item of the batch renews. The
 * job rows are locked by the renewal, so the next seq of an attempt is read and written by
 * one statement at a time; an attempt that has streamed LIMITS.maxStreamedLogChars already
 * appends no more, and a job renewed twice in one batch appends its first accepted
 * renewal's lines only (the node sends each job's lines once).
 */
const APPEND_LOG_CHUNKS = sql`,
          chunks as (
            insert into job_log_chunks (job_id, fence, seq, text, written_at)
            select distinct on (w.id) w.id, w.fence, coalesce(c.seq, 0) + 1, r.log, now()
            from locked l join r on r.ord = l.ord join w on w.id = l.id
            cross join lateral (select max(seq) as seq, coalesce(sum(length(text)), 0) as chars from job_log_chunks x where x.job_id = w.id and x.fence = w.fence) c
            where r.log is not null and c.chars < ${LIMITS.maxStreamedLogChars}
            order by w.id, r.ord
          )`;

/**
 * Renews a batch of leases in one statement (docs/architecture.md, rule 3): each succeeds
 * only if its fence, holder and session match and the lease is still live by the store's
 * clock. `locked` keeps the position of every item that passed, and only those are
 * answered ok: an item that names a renewed job under another session or holder is
 * refused, whatever else the batch holds. Refusals are classified by one follow-up read,
 * done only when something was refused, so the common case stays one round trip.
 * Outcomes come back in the order of `refs`.
 */

export async function renewLeases(db: Executor, refs: RenewRef[], ttlMs: number): Promise<RenewOutcome[]> {
  if (refs.length === 0) return [];
  const valid = refs.filter((r) => isId(r.jobId));
  // Renewals without log lines (nearly all of them) keep the statement they always had.
  const logged = valid.some((r) => r.log !== undefined && r.log.length > 0);
  const renewed = new Map<number, Date>();
  if (valid.length > 0) {
    const result = await rows(
      db,
      sql`with r as (
            select * from unnest(${array(
              valid.map((r) => r.jobId),
              'bigint',
            )}, ${array(
              valid.map((r) => r.fence),
              'bigint',
            )},
              ${array(
                valid.map((r) => r.workerId),
                'text',
              )}, ${array(
                valid.map((r) => r.session),
                'text',
              )}${
                logged
                  ? sql`, ${array(
                      valid.map((r) => (r.log ? storableLog(r.log) : null)),
                      'text',
                    )}`
                  : sql``
              }) with ordinality as r(job_id, fence, worker_id, session, ${logged ? sql`log, ` : sql``}ord)
          ),
          locked as materialized (
            select j.id, r.ord from ${fencedBatchJoin()}
            order by j.id
            for update of j
          ),
          w as (
            update jobs j set lease_expires_at = now() + ${msInterval(ttlMs)}, renewed_at = now()
            from (select distinct id from locked) l where j.id = l.id
            returning j.id, j.fence, j.lease_expires_at
          )${logged ? APPEND_LOG_CHUNKS : sql``}
          select l.ord, w.lease_expires_at from locked l join w on w.id = l.id`,
    );
    for (const row of result) renewed.set(toNumber(row.ord) - 1, toDate(row.lease_expires_at));
  }
  // Map positions in `valid` back to positions in `refs`.
  const outcomes: RenewOutcome[] = [];
  const refused: LeaseRef[] = [];
  let v = 0;
  const expiry = new Map<LeaseRef, Date>();
  for (const ref of refs) {
    if (!isId(ref.jobId)) {
      refused.push(ref);
      continue;
    }
    const at = renewed.get(v++);
    if (at) expiry.set(ref, at);
    else refused.push(ref);
  }
  const states =
    refused.length > 0
      ? await fenceStates(
          db,
          refused.map((r) => r.jobId),
        )
      : new Map();
  for (const ref of refs) {
    const at = expiry.get(ref);
    if (at) {
      outcomes.push({ jobId: ref.jobId, ok: true, leaseExpiresAt: at });
      continue;
    }
    const error = fencedWriteRefusal(ref, states.get(ref.jobId), 'renewLease');
    outcomes.push({
      jobId: ref.jobId,
      ok: false,
      code: error.code as 'STALE_FENCE' | 'FORGED_FENCE' | 'LEASE_LOST' | 'NOT_FOUND',
      message: error.message,
      cause: error.details.cause as string | undefined,
    });
  }
  return outcomes;
}

/**
 * Revokes expired leases of the token's shard in one statement (docs/architecture.md, rule 4): the
 * fence goes up at once, so the old holder is fenced off now rather than at the next
 * lease, and the job goes back to ready after its backoff, or fails when out of attempts.
 * A lease its holder never renewed may never have been delivered (the granting node
 * died first), or its worker died before its first renewal: the first
 * LIMITS.maxLostLeases such expiries hand the attempt back and make the job ready at
 * once. SKIP LOCKED passes over a row a worker is writing this instant; the next sweep
 * sees it.
 */
export async function sweepExpired(db: Executor, token: LeaderToken, limit: number): Promise<SweptJob[]> {
  const result = await rows(
    db,
    sql`with ${leadCte(token)},
        expired as materialized (
          select id, holder, renewed_at is not null as renewed, (renewed_at is null and lost_leases < ${LIMITS.maxLostLeases}) as lost from jobs
          where shard = ${token.shard} and state = 'leased' and lease_expires_at <= now() and exists (select 1 from lead)
          order by lease_expires_at, id
          limit ${Math.max(1, Math.floor(limit))}
          for update skip locked
        ),
        w as (
          update jobs j set
            fence = j.fence + 1,
            holder = null,
            holder_session = null,
            lease_expires_at = null,
            renewed_at = null,
            attempt = case when e.lost then j.attempt - 1 else j.attempt end,
            lost_leases = case when e.lost then j.lost_leases + 1 else j.lost_leases end,
            state = case when e.lost or j.attempt < j.max_attempts then 'ready' else 'failed' end,
            next_attempt_at = case when e.lost then null when j.attempt < j.max_attempts then now() + ${BACKOFF_INTERVAL} end,
            ready_at = case when e.lost or j.attempt < j.max_attempts then now() else j.ready_at end,
            ended_at = case when e.lost or j.attempt < j.max_attempts then null else now() end,
            last_error = 'lease of ' || coalesce(e.holder, 'unknown worker') || ' expired'
              || case when e.lost then ' before its holder renewed it; the attempt is not counted' else '' end
          from expired e
          where j.id = e.id
          returning j.id, j.run_id, j.dag_id, e.holder as previous_holder, j.fence, j.state, j.next_attempt_at, e.renewed, e.lost
        )
        ${selectWithLead('id')} order by w.id`,
  );
  return writtenRows(result, token, 'sweepExpired').map((r) => ({
    jobId: toJobId(r.id),
    runId: toRunId(r.run_id),
    dagId: toDagId(r.dag_id),
    previousHolder: toWorkerIdOrNull(r.previous_holder),
    fence: toNumber(r.fence),
    state: r.state as 'ready' | 'failed',
    nextAttemptAt: toDateOrNull(r.next_attempt_at),
    renewed: r.renewed === true,
    attemptCounted: r.lost !== true,
  }));
}
