import { sql, type SQL } from 'drizzle-orm';
import { checkSkippedSlots, type DagSpec } from '@fenceline/core';
import { type DueDag, type DuePageKey, type DueReadOptions, type LeaderToken, type ShardSnapshot } from '@fenceline/core/store';
import { array, firstRow, rows, type Db, type Executor } from './db';
import { deposed, leaderTokensUnnest } from './lead';
import { jobFromRow, runFromRow, toDagId, toDate, toNumber } from './rows';

export async function now(db: Executor): Promise<Date> {
  return toDate((await firstRow(db, sql`select now() as now`))?.now);
}

/** The due query itself, also explained by the tick bench so its report shows the plan production runs. */
export function dueDagsQuery(tokens: LeaderToken[], limit: number, after?: DuePageKey, options: DueReadOptions = {}): SQL {
  const horizon = Math.max(0, Math.floor(options.horizonMs ?? 0));
  const until = horizon > 0 ? sql`now() + ${horizon} * interval '1 millisecond'` : sql`now()`;
  const skip = checkSkippedSlots(options.skipSlots ?? []);
  const skipped =
    skip.length > 0
      ? sql`and d.next_run_at <> all(${array(
          skip.map((d) => d.toISOString()),
          'timestamptz',
        )})`
      : sql``;
  const past = after ? sql`and (d.next_run_at, d.id) > (${after.nextRunAt.toISOString()}::timestamptz, ${after.id}::text)` : sql``;
  return sql`with led as (
          select l.shard from shard_leases l
          join ${leaderTokensUnnest(tokens)} as t(shard, node_id, epoch)
            on l.shard = t.shard and l.holder = t.node_id and l.epoch = t.epoch
          where l.expires_at > now()
        ),
        due as (
          select d.id, d.shard, d.current_version, v.spec, d.next_run_at
          from dags d join dag_versions v on v.dag_id = d.id and v.version = d.current_version
          where d.shard in (select shard from led) and not d.paused and d.next_run_at is not null and d.next_run_at <= ${until} ${skipped}
            ${past}
          order by d.next_run_at, d.id
          limit ${Math.max(0, Math.floor(limit))}
        )
        select now() as now, due.* from (select 1) as one left join due on true order by due.next_run_at, due.id`;
}

/**
 * Due DAGs of the shards these tokens still lead, oldest slot first, by the partial index
 * on (shard, next_run_at). A token that no longer leads contributes nothing rather than
 * failing the whole call: a node that leads several shards keeps ticking the others while
 * it notices the loss, and any write for a lost shard is refused by its own lead check.
 * With a horizon, DAGs due within it are read as well; DAGs at skipped slots are not.
 */
export async function dueDags(db: Executor, tokens: LeaderToken[], limit: number, after?: DuePageKey, options?: DueReadOptions): Promise<{ now: Date; dags: DueDag[] }> {
  const result = await rows(db, dueDagsQuery(tokens, limit, after, options));
  const storeNow = toDate(result[0]?.now);
  const dags = result
    .filter((r) => r.id !== null && r.id !== undefined)
    .map((r) => ({
      id: toDagId(r.id),
      shard: toNumber(r.shard),
      version: toNumber(r.current_version),
      spec: r.spec as DagSpec,
      nextRunAt: toDate(r.next_run_at),
    }));
  return { now: storeNow, dags };
}

/**
 * Everything a new leader loads for its shard, read in one REPEATABLE READ transaction so
 * runs, jobs and versions are one consistent snapshot, after checking the token leads.
 */
export async function loadShard(db: Db, token: LeaderToken): Promise<ShardSnapshot> {
  return db.transaction(
    async (tx) => {
      const lead = await firstRow(
        tx,
        sql`select now() as now, exists (
              select 1 from shard_leases
              where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch} and expires_at > now()
            ) as led`,
      );
      if (lead?.led !== true) throw deposed(token, 'loadShard');
      const runs = (await rows(tx, sql`select * from runs where shard = ${token.shard} and state in ('queued', 'running') order by id`)).map(runFromRow);
      const jobs = (
        await rows(
          tx,
          sql`select j.* from jobs j join runs r on r.id = j.run_id
              where r.shard = ${token.shard} and r.state in ('queued', 'running') order by j.id`,
        )
      ).map(jobFromRow);
      const versions = new Map<string, DagSpec>();
      const versionRows = await rows(
        tx,
        sql`select v.dag_id, v.version, v.spec from dag_versions v
            where (v.dag_id, v.version) in (
              select r.dag_id, r.dag_version from runs r where r.shard = ${token.shard} and r.state in ('queued', 'running')
            )`,
      );
      for (const v of versionRows) versions.set(`${String(v.dag_id)}@${toNumber(v.version)}`, v.spec as DagSpec);
      return { runs, jobs, versions, now: toDate(lead.now) };
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
}
