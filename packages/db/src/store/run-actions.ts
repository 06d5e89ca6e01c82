import { sql, TransactionRollbackError, type SQL } from 'drizzle-orm';
import { heldKeyOf, runActionFingerprint, checkRunActionRequest, NotFoundError, type DagSpec, type RunId, type RunRow } from '@fenceline/core';
import {
  type JobChange,
  type LeaderToken,
  type RunActionOutcome,
  type RunActionRequest,
  type RunActionResult,
  type RunActionRow,
  type RequestedRunAction,
  type RunActionWrite,
} from '@fenceline/core/store';
import { firstRow, jsonb, rows, type Db, type Executor, type RawRow } from './db';
import { deposed } from './lead';
import { checkStoredRequest, storedFingerprint } from './request-keys';
import { isId, jobFromRow, runFromRow, str, strOrNull, toDagId, toDate, toDateOrNull, toId, toJobId, toNumber, toRunId, toWorkerIdOrNull } from './rows';

/**
 * Operator actions on runs (docs/architecture.md, "Operator actions"). A request is
 * checked against its run's DAG version and stored pending, with a notice to the shard's
 * leader, in one statement; the leader applies it with applyRunAction, in one transaction
 * with every job change it makes.
 */

const ACTION_COLUMNS = sql`id, run_id, dag_id, shard, kind, task_ids, downstream, reason, requested_by, state, result, created_at, applied_at`;

function actionFromRow(r: RawRow): RunActionRow {
  return {
    id: toId(r.id),
    runId: toRunId(r.run_id),
    dagId: toDagId(r.dag_id),
    shard: toNumber(r.shard),
    kind: str(r.kind) as RunActionRow['kind'],
    taskIds: (r.task_ids as string[] | null) ?? [],
    downstream: r.downstream === true,
    reason: strOrNull(r.reason),
    requestedBy: str(r.requested_by),
    state: str(r.state) as RunActionRow['state'],
    createdAt: toDate(r.created_at),
    appliedAt: toDateOrNull(r.applied_at),
    result: (r.result as RunActionResult | null) ?? null,
  };
}

export async function requestRunAction(db: Db, req: RunActionRequest): Promise<RequestedRunAction> {
  const held = heldKeyOf(req, () => runActionFingerprint(req));
  const key = held?.key ?? null;
  const owner = held?.owner ?? '';
  // The owner's action under the key, if any; the key sent with another request is refused before anything is written.
  const byKey = async (): Promise<RequestedRunAction | null> => {
    if (held === null) return null;
    const row = await firstRow(
      db,
      sql`select ${ACTION_COLUMNS}, request_fingerprint from run_actions where run_id = ${req.runId} and request_owner = ${owner} and request_key = ${key}`,
    );
    if (!row) return null;
    checkStoredRequest(held, row.request_fingerprint);
    return { ...actionFromRow(row), repeated: true };
  };
  const run = isId(req.runId)
    ? await firstRow(db, sql`select r.id, r.dag_id, r.shard, v.spec from runs r join dag_versions v on v.dag_id = r.dag_id and v.version = r.dag_version where r.id = ${req.runId}`)
    : undefined;
  if (!run) throw new NotFoundError(`run ${req.runId} does not exist`, { runId: req.runId });
  checkRunActionRequest(run.spec as DagSpec, req);
  const earlier = await byKey();
  if (earlier) return earlier;
  const shard = toNumber(run.shard);
  const result = await rows(
    db,
    sql`with w as (
          insert into run_actions (run_id, dag_id, shard, kind, task_ids, downstream, reason, requested_by, request_key, request_owner, request_fingerprint)
          values (${req.runId}, ${str(run.dag_id)}, ${shard}, ${req.kind}, ${jsonb(req.taskIds ?? [])}, ${req.downstream === true}, ${req.reason ?? null}, ${req.requestedBy},
            ${key}::text, ${owner}, ${held === null ? null : storedFingerprint(held)}::text)
          on conflict do nothing
          returning ${ACTION_COLUMNS}
        ),
        n as (select pg_notify('fenceline', json_build_object('kind', 'run-action', 'shard', shard, 'actionId', id::text, 'runId', run_id::text)::text) from w)
        select (select count(*) from n) as notified, w.* from w`,
  );
  if (result[0]) return actionFromRow(result[0]);
  // The key was taken by a request that raced this one: answer with that request, if it asked the same.
  const holder = await byKey();
  if (!holder) throw new Error(`run action for run ${req.runId} was neither stored nor found under its key`);
  return holder;
}

export async function getRunAction(db: Executor, actionId: string): Promise<RunActionRow> {
  const row = isId(actionId) ? await firstRow(db, sql`select ${ACTION_COLUMNS} from run_actions where id = ${actionId}`) : undefined;
  if (!row) throw new NotFoundError(`run action ${actionId} does not exist`, { actionId });
  return actionFromRow(row);
}

export async function listRunActions(db: Executor, runId: RunId): Promise<RunActionRow[]> {
  if (!isId(runId)) return [];
  const result = await rows(db, sql`select ${ACTION_COLUMNS} from run_actions where run_id = ${runId} order by id desc limit 200`);
  return result.map(actionFromRow);
}

export async function pendingRunActions(db: Executor, token: LeaderToken): Promise<RunActionRow[]> {
  const result = await rows(
    db,
    sql`select ${ACTION_COLUMNS} from run_actions
        where shard = ${token.shard} and state = 'pending'
          and exists (select 1 from shard_leases where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch})
        order by id limit 1000`,
  );
  return result.map(actionFromRow);
}

export async function readRun(db: Executor, runId: RunId): Promise<{ run: RunRow; jobs: ReturnType<typeof jobFromRow>[] } | null> {
  if (!isId(runId)) return null;
  const run = await firstRow(db, sql`select id, dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at from runs where id = ${runId}`);
  if (!run) return null;
  const jobs = await rows(db, sql`select * from jobs where run_id = ${runId} order by id`);
  return { run: runFromRow(run), jobs: jobs.map(jobFromRow) };
}

/** The columns a change writes, by the state it moves the job to. */
function changeSet(change: JobChange, note: string): SQL {
  switch (change.to) {
    case 'waiting':
      // A fresh start: no attempt counted, no lease, no error; fence + 1 so that nothing
      // an earlier attempt's holder still sends can land.
      return sql`state = 'waiting', attempt = 0, lost_leases = 0, fence = fence + 1, holder = null, holder_session = null, lease_expires_at = null,
        next_attempt_at = null, ready_at = null, leased_at = null, renewed_at = null, ended_at = null, last_error = null`;
    case 'upstream_failed':
      return sql`state = 'upstream_failed', ended_at = now()`;
    default:
      // Ended by hand: a lease still held is revoked (fence + 1), so its holder's result is refused.
      return sql`state = ${change.to}, fence = fence + 1, lease_expires_at = null, ended_at = now(),
        last_error = ${change.to === 'succeeded' ? null : note}`;
  }
}

export async function applyRunAction(db: Db, token: LeaderToken, write: RunActionWrite): Promise<RunActionOutcome> {
  if (!isId(write.actionId) || !isId(write.runId)) throw new NotFoundError(`run action ${write.actionId} does not exist`, { actionId: write.actionId });
  return db
    .transaction(async (tx) => {
      const led = await firstRow(
        tx,
        sql`select shard from shard_leases where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch} and expires_at > now() for key share`,
      );
      if (!led) throw deposed(token, 'applyRunAction');
      const action = await firstRow(tx, sql`select ${ACTION_COLUMNS} from run_actions where id = ${write.actionId} and shard = ${token.shard} for update`);
      if (!action) throw new NotFoundError(`run action ${write.actionId} does not exist in shard ${token.shard}`, { actionId: write.actionId });
      if (action.state === 'applied') return { kind: 'done', action: actionFromRow(action) } as const;
      const revoked: { jobId: ReturnType<typeof toJobId>; fence: number; holder: ReturnType<typeof toWorkerIdOrNull> }[] = [];
      for (const change of write.changes) {
        const moved = await firstRow(
          tx,
          sql`update jobs set ${changeSet(change, write.note)}
            where id = ${change.jobId} and run_id = ${write.runId} and state = ${change.from}
            returning id, fence, holder`,
        );
        // A job that moved since the plan was read (a result landed): undo everything and let the leader plan again.
        if (!moved) tx.rollback();
        if (change.from === 'leased') revoked.push({ jobId: toJobId(moved!.id), fence: toNumber(moved!.fence), holder: toWorkerIdOrNull(moved!.holder) });
      }
      if (write.runState === 'cancelled') {
        await rows(tx, sql`update runs set state = 'cancelled', ended_at = now() where id = ${write.runId} and state in ('queued', 'running')`);
      } else if (write.runState === 'running') {
        await rows(
          tx,
          sql`update runs set state = 'running', ended_at = null, started_at = coalesce(started_at, now()) where id = ${write.runId} and state in ('succeeded', 'failed', 'cancelled')`,
        );
      }
      const run = await firstRow(
        tx,
        sql`select id, dag_id, dag_version, shard, scheduled_at, trigger, state, created_at, started_at, ended_at from runs where id = ${write.runId}`,
      );
      if (!run) throw new NotFoundError(`run ${write.runId} does not exist`, { runId: write.runId });
      const result: RunActionResult = { ...write.result, runState: runFromRow(run).state };
      const applied = await firstRow(
        tx,
        sql`update run_actions set state = 'applied', applied_at = now(), result = ${jsonb(result)} where id = ${write.actionId} returning ${ACTION_COLUMNS}`,
      );
      const jobs = await rows(tx, sql`select * from jobs where run_id = ${write.runId} order by id`);
      return { kind: 'applied', action: actionFromRow(applied!), run: runFromRow(run), jobs: jobs.map(jobFromRow), revoked } as const;
    })
    .catch((err: unknown) => {
      // drizzle's rollback throws to unwind the transaction: that is the conflict outcome.
      if (err instanceof TransactionRollbackError) return { kind: 'conflict' } as const;
      throw err;
    });
}
