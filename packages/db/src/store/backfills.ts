import { sql } from 'drizzle-orm';
import {
  NotFoundError,
  isBackfillId,
  parseDagId,
  planBackfill,
  checkBackfillStep,
  backfillFingerprint,
  heldKeyOf,
  defaultRunParams,
  type BackfillId,
  type BackfillRequest,
  type BackfillRow,
  type DagSpec,
} from '@fenceline/core';
import { type BackfillAdvance, type BackfillSettled, type BackfillStep, type LeaderToken, type ListBackfillsQuery } from '@fenceline/core/store';
import { array, firstRow, jsonb, rows, ts, type Db, type Executor, type RawRow } from './db';
import { getDag } from './dags';
import { deposed, leadCte } from './lead';
import { noticeSql } from './notices';
import { checkStoredRequest, storedFingerprint } from './request-keys';
import { toDagId, toDate, toDateOrNull, toId, toNumber, toRunId, runFromRow } from './rows';

const RUN_COLUMNS = sql`id, dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at, params`;

/** A backfill row with its runs counted by state (by runs_backfill_idx). */
/**
 * Runs a backfill in rerun mode took over whose clear its leader has not applied yet: they
 * still read as ended, and count as the backfill's unfinished runs until they run again.
 */
const PENDING_RERUNS = sql`select a.run_id from run_actions a where a.state = 'pending' and a.requested_by = 'backfill ' || b.id`;

const BACKFILL_SELECT = sql`select b.*,
  (select count(*) from runs r where r.backfill_id = b.id and (r.state in ('queued', 'running') or r.id in (${PENDING_RERUNS}))) as active_runs,
  (select count(*) from runs r where r.backfill_id = b.id and r.state in ('succeeded', 'failed', 'cancelled') and r.id not in (${PENDING_RERUNS})) as finished_runs
  from backfills b`;

function backfillFromRow(r: RawRow): BackfillRow {
  return {
    id: toId(r.id) as BackfillId,
    dagId: toDagId(r.dag_id),
    dagVersion: toNumber(r.dag_version),
    shard: toNumber(r.shard),
    fromAt: toDate(r.from_at),
    toAt: toDate(r.to_at),
    maxActiveRuns: toNumber(r.max_active_runs),
    mode: r.mode as BackfillRow['mode'],
    state: r.state as BackfillRow['state'],
    totalSlots: toNumber(r.total_slots),
    nextSlotAt: toDateOrNull(r.next_slot_at),
    createdRuns: toNumber(r.created_runs),
    skippedSlots: toNumber(r.skipped_slots),
    rerunRuns: toNumber(r.rerun_runs),
    activeRuns: toNumber(r.active_runs),
    finishedRuns: toNumber(r.finished_runs),
    requestedBy: String(r.requested_by),
    createdAt: toDate(r.created_at),
    endedAt: toDateOrNull(r.ended_at),
  };
}

/**
 * Validates the request against the DAG's current schedule (planBackfill), records the
 * backfill pinned to that version, and notifies the shard's leader, in one transaction:
 * the notice goes out only if the row commits.
 */
export async function createBackfill(db: Db, request: BackfillRequest): Promise<BackfillRow> {
  const dagId = parseDagId(request.dagId, 'dagId');
  const held = heldKeyOf(request, () => backfillFingerprint(request));
  const requestKey = held?.key ?? null;
  const owner = held?.owner ?? '';
  return db.transaction(async (tx) => {
    const dag = await getDag(tx, dagId);
    // The owner's backfill under the key, if any; the key sent with another request is refused, and the transaction writes nothing.
    const byKey = async (): Promise<BackfillRow | null> => {
      if (held === null) return null;
      const row = await firstRow(tx, sql`select id, request_fingerprint from backfills where dag_id = ${dag.id} and request_owner = ${owner} and request_key = ${requestKey}`);
      if (!row) return null;
      checkStoredRequest(held, row.request_fingerprint);
      return { ...(await getBackfill(tx, toId(row.id) as BackfillId)), repeated: true };
    };
    const earlier = await byKey();
    if (earlier) return earlier;
    const plan = planBackfill(request, dag.spec.schedule);
    // Two requests with one key racing: the second waits on the first's index entry, then inserts nothing.
    const inserted = await firstRow(
      tx,
      sql`insert into backfills (dag_id, dag_version, shard, from_at, to_at, max_active_runs, mode, state, total_slots, next_slot_at, requested_by,
            request_key, request_owner, request_fingerprint)
          values (${dag.id}, ${dag.version}, ${dag.shard}, ${ts(new Date(plan.fromMs))}, ${ts(new Date(plan.toMs))}, ${plan.maxActiveRuns}, ${plan.mode},
            'running', ${plan.totalSlots}, ${ts(new Date(plan.firstSlotMs))}, ${plan.requestedBy}, ${requestKey}, ${owner}, ${held === null ? null : storedFingerprint(held)})
          on conflict (dag_id, request_owner, request_key) where request_key is not null do nothing
          returning id`,
    );
    if (!inserted) {
      const first = await byKey();
      if (!first) throw new Error(`backfill of ${dag.id} was neither stored nor found under its key`);
      return first;
    }
    const id = toId(inserted.id) as BackfillId;
    await rows(tx, noticeSql({ kind: 'backfill-changed', shard: dag.shard, backfillId: id }));
    return getBackfill(tx, id);
  });
}

export async function getBackfill(db: Executor, backfillId: BackfillId): Promise<BackfillRow> {
  const row = isBackfillId(backfillId) ? await firstRow(db, sql`${BACKFILL_SELECT} where b.id = ${backfillId}`) : undefined;
  if (!row) throw new NotFoundError(`backfill ${backfillId} does not exist`, { backfillId });
  return backfillFromRow(row);
}

/** Newest first, of one DAG or of all. */
export async function listBackfills(db: Executor, query: ListBackfillsQuery): Promise<BackfillRow[]> {
  const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
  const where = query.dagId === undefined ? sql`true` : sql`b.dag_id = ${query.dagId}`;
  const result = await rows(db, sql`${BACKFILL_SELECT} where ${where} order by b.id desc limit ${limit}`);
  return result.map(backfillFromRow);
}

/** running -> cancelled and a notice to the shard's leader, which settles its queued runs. */
export async function cancelBackfill(db: Db, backfillId: BackfillId): Promise<BackfillRow> {
  const before = await getBackfill(db, backfillId);
  if (before.state !== 'running') return before;
  await rows(
    db,
    sql`with w as (update backfills set state = 'cancelled' where id = ${backfillId} and state = 'running' returning id, shard)
        select pg_notify('fenceline', json_build_object('kind', 'backfill-changed', 'shard', shard, 'backfillId', id::text)::text) from w`,
  );
  return getBackfill(db, backfillId);
}

/** The open backfills (ended_at null, by backfills_open_idx) of the tokens' shards, oldest first. */
export async function openBackfills(db: Executor, tokens: LeaderToken[]): Promise<BackfillRow[]> {
  if (tokens.length === 0) return [];
  const result = await rows(
    db,
    sql`${BACKFILL_SELECT} where b.shard = any(${array(
      tokens.map((t) => t.shard),
      'int',
    )}) and b.ended_at is null order by b.id`,
  );
  return result.map(backfillFromRow);
}

/** Takes the lead check's FOR KEY SHARE lock for the rest of the transaction, or throws DeposedLeaderError. */
async function checkLead(tx: Executor, token: LeaderToken, operation: string): Promise<void> {
  const row = await firstRow(tx, sql`with ${leadCte(token)} select exists (select 1 from lead) as led`);
  if (row?.led !== true) throw deposed(token, operation);
}

/**
 * One leader step of a backfill (LeaderStore.advanceBackfill), in one transaction: the
 * lead check (its lock held to commit, so a takeover waits for this step), the backfill
 * row locked FOR UPDATE (so a cancel waits for it too), the runs inserted with ON CONFLICT
 * (dag_id, scheduled_at) DO NOTHING, and the next slot and counts moved in the same commit.
 * The runs are inserted in slot order. Should a step and a tick that write the same slots
 * at once still wait on each other in opposite orders, PostgreSQL aborts one of them as a
 * deadlock; it has written nothing, and the next pass or tick makes it again whole.
 */
export async function advanceBackfill(db: Db, token: LeaderToken, step: BackfillStep): Promise<BackfillAdvance | null> {
  checkBackfillStep(step);
  if (!isBackfillId(step.backfillId)) return null;
  return db.transaction(async (tx) => {
    await checkLead(tx, token, 'advanceBackfill');
    const locked = await firstRow(tx, sql`select * from backfills where id = ${step.backfillId} and shard = ${token.shard} for update`);
    if (!locked || locked.state !== 'running') return null;
    const nextSlot = toDateOrNull(locked.next_slot_at);
    if ((nextSlot?.getTime() ?? null) !== (step.expectedNextSlotAt?.getTime() ?? null)) return null;
    const first = step.slots[0];
    const last = step.slots[step.slots.length - 1];
    if (first && (nextSlot === null || first.getTime() < nextSlot.getTime() || last!.getTime() >= toDate(locked.to_at).getTime())) return null;
    const by = `backfill ${step.backfillId}`;
    const active = await firstRow(
      tx,
      sql`select count(*) as n from runs where backfill_id = ${step.backfillId}
            and (state in ('queued', 'running') or id in (select run_id from run_actions where state = 'pending' and requested_by = ${by}))`,
    );
    const activeRuns = toNumber(active?.n ?? 0);
    if (activeRuns + step.slots.length > toNumber(locked.max_active_runs)) return null;
    // A backfill's runs take the defaults of the params their version declares, as scheduled runs do.
    const declared =
      step.slots.length === 0
        ? null
        : await firstRow(
            tx,
            sql`select v.spec->'params' as params from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version where d.id = ${String(locked.dag_id)}`,
          );
    const params = defaultRunParams((declared?.params as DagSpec['params'] | null) ?? {});
    const created =
      step.slots.length === 0
        ? []
        : await rows(
            tx,
            sql`insert into runs (dag_id, dag_version, shard, scheduled_at, trigger, state, backfill_id, params)
                select d.id, d.current_version, d.shard, s.slot, 'backfill', 'queued', ${step.backfillId}::bigint, ${jsonb(params)}
                from dags d cross join unnest(${array(
                  step.slots.map((s) => s.toISOString()),
                  'timestamptz',
                )}) as s(slot)
                where d.id = ${String(locked.dag_id)}
                order by s.slot
                on conflict (dag_id, scheduled_at) do nothing
                returning ${RUN_COLUMNS}`,
          );
    // Rerun mode: a slot whose run has ended is taken over by the backfill and cleared, all
    // its tasks, by a pending operator action its leader applies; a slot whose run is still
    // queued or running is skipped.
    const createdAt = new Set(created.map((r) => toDate(r.scheduled_at).getTime()));
    const taken = step.slots.filter((slot) => !createdAt.has(slot.getTime()));
    const rerun =
      locked.mode !== 'rerun' || taken.length === 0
        ? []
        : await rows(
            tx,
            sql`with r as (
                  update runs set backfill_id = ${step.backfillId}::bigint
                  where dag_id = ${String(locked.dag_id)} and scheduled_at = any(${array(
                    taken.map((t) => t.toISOString()),
                    'timestamptz',
                  )}) and state in ('succeeded', 'failed', 'cancelled')
                  returning id, dag_id, shard, dag_version
                )
                insert into run_actions (run_id, dag_id, shard, kind, task_ids, reason, requested_by)
                select r.id, r.dag_id, r.shard, 'clear',
                  (select coalesce(jsonb_agg(t -> 'id'), '[]'::jsonb) from dag_versions v, jsonb_array_elements(v.spec -> 'tasks') t where v.dag_id = r.dag_id and v.version = r.dag_version),
                  ${`run again by backfill ${step.backfillId}`}, ${by}
                from r
                returning run_id`,
          );
    const done = step.nextSlotAt === null && activeRuns + created.length + rerun.length === 0;
    await rows(
      tx,
      sql`update backfills set next_slot_at = ${step.nextSlotAt === null ? null : ts(step.nextSlotAt)},
            created_runs = created_runs + ${created.length}, rerun_runs = rerun_runs + ${rerun.length},
            skipped_slots = skipped_slots + ${step.slots.length - created.length - rerun.length}
            ${done ? sql`, state = 'done', ended_at = now()` : sql``}
          where id = ${step.backfillId}`,
    );
    const runs = created.map(runFromRow).sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    return { backfill: await getBackfill(tx, step.backfillId), created: runs, rerun: rerun.map((r) => toRunId(r.run_id)) };
  });
}

/**
 * A cancelled backfill's queued runs -> cancelled, a pending cancel action stored for each
 * of its running runs, and its ended_at stamped
 * (LeaderStore.settleBackfill), in one transaction under the lead check. A queued run the
 * leader is starting at the same moment is either cancelled here or started there, never
 * both: each write takes the run only in state queued.
 */
export async function settleBackfill(db: Db, token: LeaderToken, backfillId: BackfillId): Promise<BackfillSettled | null> {
  if (!isBackfillId(backfillId)) return null;
  return db.transaction(async (tx) => {
    await checkLead(tx, token, 'settleBackfill');
    const locked = await firstRow(tx, sql`select id from backfills where id = ${backfillId} and shard = ${token.shard} and state = 'cancelled' and ended_at is null for update`);
    if (!locked) return null;
    const cancelled = await rows(tx, sql`update runs set state = 'cancelled', ended_at = now() where backfill_id = ${backfillId} and state = 'queued' returning id`);
    const running = await rows(tx, sql`select id from runs where backfill_id = ${backfillId} and state = 'running' order by id`);
    // Its running runs get a pending cancel each, in this transaction: the leader applies
    // them as operator actions (run-actions.ts), and a crash before that leaves them stored.
    await rows(
      tx,
      sql`insert into run_actions (run_id, dag_id, shard, kind, task_ids, reason, requested_by)
          select id, dag_id, shard, 'cancel', '[]'::jsonb, 'its backfill was cancelled', ${`backfill ${backfillId}`}
          from runs where backfill_id = ${backfillId} and state = 'running' order by id`,
    );
    await rows(tx, sql`update backfills set ended_at = now() where id = ${backfillId}`);
    return {
      backfill: await getBackfill(tx, backfillId),
      cancelledRunIds: cancelled.map((r) => toRunId(r.id)).sort(compareNumeric),
      runningRunIds: running.map((r) => toRunId(r.id)),
    };
  });
}

function compareNumeric(a: string, b: string): number {
  return a.length - b.length || (a < b ? -1 : a > b ? 1 : 0);
}
