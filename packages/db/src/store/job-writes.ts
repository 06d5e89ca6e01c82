import { sql } from 'drizzle-orm';
import { effectsProblem, failureProblem, failureSizeRefusal, fencedWriteRefusal, storedEffects, resultProblem, resultSizeRefusal, type JobRow } from '@fenceline/core';
import { type CompleteItem, type FailItem, type FailureWrite, type LeaseRef, type WriteOutcome } from '@fenceline/core/store';
import { array, rows, type Executor } from './db';
import { NO_SYNC_REQUIREMENT, noSyncStandby, syncStandbyCheck, type Durability } from './durability';
import { BACKOFF_INTERVAL, fenceStates, fencedBatchJoin } from './fencing';
import { isId, jobFromRow } from './rows';

/**
 * The worker's fenced writes (docs/architecture.md, rule 5). Each is one statement: the job update
 * carries the fence check, and the result store write is chained to the rows that update
 * returned, so a refused fence writes nothing anywhere. The result upsert keeps the
 * highest fence per job (`where results.fence < excluded.fence`); the job update also
 * refuses outright when the result store already holds this fence or a higher one, so the
 * two checks cannot disagree and leave a job finished without its result. The same
 * statement adds the attempt's row to job_attempts, chained to the same rows, so every
 * attempt that wrote a result keeps it after a later fence replaced it in results.
 */

function byteLength(text: string | null | undefined): number {
  return text ? Buffer.byteLength(text, 'utf8') : 0;
}

/** An attempt's effect reports as the statement takes them: JSON text of only their known fields, or null for none. */
function effectsJson(effects: CompleteItem['effects']): string | null {
  const stored = storedEffects(effects);
  return stored === null ? null : JSON.stringify(stored);
}

const RESULT_UPSERT = sql`on conflict (job_id) do update set
    fence = excluded.fence, worker_id = excluded.worker_id, outcome = excluded.outcome, output = excluded.output,
    error = excluded.error, logs = excluded.logs, effects = excluded.effects, written_at = excluded.written_at
  where results.fence < excluded.fence`;

/**
 * The fence checks above let one write through per fence, so an attempt's row is never
 * written twice; should one be, the first stays, as results keeps the first of a fence.
 */
const ATTEMPT_INSERT = sql`on conflict (job_id, fence) do nothing`;

/**
 * Many completions in one statement, each fenced on its own. The `locked` CTE takes the
 * row locks of the accepted jobs in id order (so overlapping batches cannot deadlock) and
 * re-checks fence, holder, session, liveness and the result store once it holds them; it
 * keeps the position of every item that passed, and `won` takes, per job, the first of
 * them. The update, the result upsert and the attempt's row all carry that item, so an
 * item that names the same job but fails a check (another session, another holder,
 * another fence) can neither shadow the holder's item nor lend it its output: it is
 * refused alone. Refused items are classified by one follow-up read, made only when
 * something was refused.
 */
export async function completeJobs(db: Executor, items: CompleteItem[], durability: Durability = NO_SYNC_REQUIREMENT): Promise<WriteOutcome[]> {
  const outcomes: (WriteOutcome | undefined)[] = items.map(() => undefined);
  const send: { at: number; item: CompleteItem; output: string; effects: string | null }[] = [];
  items.forEach((item, at) => {
    // Text and JSON PostgreSQL refuses would fail the statement for every item in it.
    const problem = resultProblem(item.ref.jobId, item) ?? effectsProblem(item.ref.jobId, item.effects);
    if (problem !== null) {
      outcomes[at] = { jobId: item.ref.jobId, ok: false, error: problem };
      return;
    }
    const output = JSON.stringify(item.output ?? null);
    const tooBig = resultSizeRefusal(item.ref.jobId, Buffer.byteLength(output, 'utf8'), byteLength(item.logs));
    if (tooBig) {
      outcomes[at] = { jobId: item.ref.jobId, ok: false, error: tooBig };
      return;
    }
    // Every item goes to the statement, a job named twice included: only one that passes
    // every check may complete it (the first such), whatever the order of the others.
    if (!isId(item.ref.jobId)) return;
    send.push({ at, item, output, effects: effectsJson(item.effects) });
  });
  if (send.length > 0) {
    const written = await rows(
      db,
      sql`with r as (
            select * from unnest(${array(
              send.map((s) => s.item.ref.jobId),
              'bigint',
            )}, ${array(
              send.map((s) => s.item.ref.fence),
              'bigint',
            )},
              ${array(
                send.map((s) => s.item.ref.workerId),
                'text',
              )}, ${array(
                send.map((s) => s.output),
                'text',
              )},
              ${array(
                send.map((s) => s.item.logs ?? null),
                'text',
              )}, ${array(
                send.map((s) => s.effects),
                'text',
              )}, ${array(
                send.map((s) => s.at),
                'int',
              )}, ${array(
                send.map((s) => s.item.ref.session),
                'text',
              )}) as r(job_id, fence, worker_id, output, logs, effects, at, session)
          ),
          sync as (select ${syncStandbyCheck(durability)} as ok),
          locked as materialized (
            select j.id, r.at from ${fencedBatchJoin()}
              and not exists (select 1 from results x where x.job_id = j.id and x.fence >= r.fence)
              and (select ok from sync)
            order by j.id
            for update of j
          ),
          won as (select distinct on (id) id, at from locked order by id, at),
          w as (
            update jobs j set state = 'succeeded', ended_at = now(), lease_expires_at = null, holder_session = null
            from won where j.id = won.id
            returning j.*, won.at as item_at
          ),
          res as (
            insert into results (job_id, fence, worker_id, outcome, output, error, logs, effects, written_at)
            select w.id, w.fence, w.holder, 'succeeded', r.output::jsonb, null, r.logs, r.effects::jsonb, now() from w join r on r.at = w.item_at
            ${RESULT_UPSERT}
            returning job_id
          ),
          att as (
            insert into job_attempts (job_id, fence, attempt, worker_id, outcome, output, error, logs, effects, started_at, ended_at)
            select w.id, w.fence, w.attempt, w.holder, 'succeeded', r.output::jsonb, null, r.logs, r.effects::jsonb, w.leased_at, now() from w join r on r.at = w.item_at
            ${ATTEMPT_INSERT}
          )
          select sync.ok as sync_ok, w.item_at as at, w.* from sync left join w on true`,
    );
    // The check's row comes back whatever was written: a server that would have committed
    // without a synchronous standby wrote nothing, and the worker sends the results again.
    if (written[0]?.sync_ok === false) throw noSyncStandby();
    for (const row of written) {
      if (row.at === null || row.at === undefined) continue;
      const at = Number(row.at);
      outcomes[at] = { jobId: items[at]!.ref.jobId, ok: true, row: jobFromRow(row) };
    }
  }
  return classified(db, items, outcomes, 'completeJob');
}

/**
 * Records failed attempts under their fences, many in one statement, each fenced on its
 * own as completeJobs does (the `locked` CTE takes the row locks in id order and keeps the
 * position of every item that passed; `won` takes, per job, the first of them): back to
 * ready after the backoff (store clock) when the failure is retryable and attempts remain,
 * else failed for good. The holder stays as the last holder; the next grant raises the
 * fence. An item that fails a check is refused alone, classified by one follow-up read.
 */
export async function failJobs(db: Executor, items: FailItem[], durability: Durability = NO_SYNC_REQUIREMENT): Promise<WriteOutcome[]> {
  const outcomes: (WriteOutcome | undefined)[] = items.map(() => undefined);
  const send: { at: number; item: FailItem; effects: string | null }[] = [];
  items.forEach((item, at) => {
    const { ref } = item;
    // Text and JSON PostgreSQL refuses would fail the statement for every item in it.
    const refusal = failureProblem(ref.jobId, item) ?? effectsProblem(ref.jobId, item.effects) ?? failureSizeRefusal(ref.jobId, byteLength(item.error), byteLength(item.logs));
    if (refusal) {
      outcomes[at] = { jobId: ref.jobId, ok: false, error: refusal };
      return;
    }
    if (!isId(ref.jobId)) return;
    send.push({ at, item, effects: effectsJson(item.effects) });
  });
  if (send.length > 0) {
    const retry = sql`(r.retryable and j.attempt < j.max_attempts)`;
    const written = await rows(
      db,
      sql`with r as (
            select * from unnest(${array(
              send.map((s) => s.item.ref.jobId),
              'bigint',
            )}, ${array(
              send.map((s) => s.item.ref.fence),
              'bigint',
            )}, ${array(
              send.map((s) => s.item.ref.workerId),
              'text',
            )}, ${array(
              send.map((s) => s.item.error),
              'text',
            )}, ${array(
              send.map((s) => String(s.item.retryable)),
              'text',
            )}::boolean[], ${array(
              send.map((s) => s.item.logs ?? null),
              'text',
            )}, ${array(
              send.map((s) => s.effects),
              'text',
            )}, ${array(
              send.map((s) => s.at),
              'int',
            )}, ${array(
              send.map((s) => s.item.ref.session),
              'text',
            )}) as r(job_id, fence, worker_id, error, retryable, logs, effects, at, session)
          ),
          sync as (select ${syncStandbyCheck(durability)} as ok),
          locked as materialized (
            select j.id, r.at from ${fencedBatchJoin()}
              and not exists (select 1 from results x where x.job_id = j.id and x.fence >= r.fence)
              and (select ok from sync)
            order by j.id
            for update of j
          ),
          won as (select distinct on (id) id, at from locked order by id, at),
          w as (
            update jobs j set
              state = case when ${retry} then 'ready' else 'failed' end,
              next_attempt_at = case when ${retry} then now() + ${BACKOFF_INTERVAL} end,
              ready_at = case when ${retry} then now() else j.ready_at end,
              ended_at = case when ${retry} then null else now() end,
              lease_expires_at = null,
              holder_session = null,
              last_error = r.error
            from won join r on r.at = won.at
            where j.id = won.id
            returning j.*, won.at as item_at
          ),
          res as (
            insert into results (job_id, fence, worker_id, outcome, output, error, logs, effects, written_at)
            select w.id, w.fence, w.holder, 'failed', null, r.error, r.logs, r.effects::jsonb, now() from w join r on r.at = w.item_at
            ${RESULT_UPSERT}
            returning job_id
          ),
          att as (
            insert into job_attempts (job_id, fence, attempt, worker_id, outcome, output, error, logs, effects, started_at, ended_at)
            select w.id, w.fence, w.attempt, w.holder, 'failed', null, r.error, r.logs, r.effects::jsonb, w.leased_at, now() from w join r on r.at = w.item_at
            ${ATTEMPT_INSERT}
          )
          select sync.ok as sync_ok, w.item_at as at, w.* from sync left join w on true`,
    );
    // As in completeJobs: a server that would commit without a synchronous standby wrote nothing.
    if (written[0]?.sync_ok === false) throw noSyncStandby();
    for (const row of written) {
      if (row.at === null || row.at === undefined) continue;
      const at = Number(row.at);
      outcomes[at] = { jobId: items[at]!.ref.jobId, ok: true, row: jobFromRow(row) };
    }
  }
  return classified(db, items, outcomes, 'failJob');
}

/** One failed attempt (failJobs); throws its refusal. */
export async function failJob(db: Executor, ref: LeaseRef, failure: FailureWrite, durability: Durability = NO_SYNC_REQUIREMENT): Promise<JobRow> {
  return only(await failJobs(db, [{ ...failure, ref }], durability));
}

/**
 * Hands live leases back unfinished, many in one statement, each fenced on its own as
 * completeJobs does: ready at once, fence + 1 so the releasing worker is fenced off, and
 * the attempt not counted. An item that fails a check is refused alone.
 */
export async function releaseJobs(db: Executor, refs: LeaseRef[]): Promise<WriteOutcome[]> {
  const outcomes: (WriteOutcome | undefined)[] = refs.map(() => undefined);
  const send = refs.flatMap((ref, at) => (isId(ref.jobId) ? [{ ref, at }] : []));
  if (send.length > 0) {
    const written = await rows(
      db,
      sql`with r as (
            select * from unnest(${array(
              send.map((s) => s.ref.jobId),
              'bigint',
            )}, ${array(
              send.map((s) => s.ref.fence),
              'bigint',
            )}, ${array(
              send.map((s) => s.ref.workerId),
              'text',
            )}, ${array(
              send.map((s) => s.at),
              'int',
            )}, ${array(
              send.map((s) => s.ref.session),
              'text',
            )}) as r(job_id, fence, worker_id, at, session)
          ),
          locked as materialized (
            select j.id, r.at from ${fencedBatchJoin()}
            order by j.id
            for update of j
          ),
          won as (select distinct on (id) id, at from locked order by id, at),
          w as (
            update jobs j set state = 'ready', fence = j.fence + 1, attempt = greatest(j.attempt - 1, 0), holder = null, holder_session = null,
              lease_expires_at = null, next_attempt_at = null, ready_at = now()
            from won
            where j.id = won.id
            returning j.*, won.at as item_at
          )
          select w.item_at as at, w.* from w`,
    );
    for (const row of written) {
      const at = Number(row.at);
      outcomes[at] = { jobId: refs[at]!.jobId, ok: true, row: jobFromRow(row) };
    }
  }
  return classified(
    db,
    refs.map((ref) => ({ ref })),
    outcomes,
    'releaseJob',
  );
}

/** One hand-back (releaseJobs); throws its refusal. */
export async function releaseJob(db: Executor, ref: LeaseRef): Promise<JobRow> {
  return only(await releaseJobs(db, [ref]));
}

/** Fills in the refused items of a batch, each classified from one read of the jobs as they are now. */
async function classified(db: Executor, items: { ref: LeaseRef }[], outcomes: (WriteOutcome | undefined)[], operation: string): Promise<WriteOutcome[]> {
  const refused = items.filter((_, at) => outcomes[at] === undefined);
  const states =
    refused.length > 0
      ? await fenceStates(
          db,
          refused.map((i) => i.ref.jobId),
        )
      : new Map();
  return items.map((item, at) => outcomes[at] ?? { jobId: item.ref.jobId, ok: false, error: fencedWriteRefusal(item.ref, states.get(item.ref.jobId), operation) });
}

/** The row of a batch of one, or its refusal thrown. */
function only(outcomes: WriteOutcome[]): JobRow {
  const o = outcomes[0]!;
  if (!o.ok) throw o.error;
  return o.row;
}
