import { sql } from 'drizzle-orm';
import { checkContention, type ShardLeaseRow } from '@fenceline/core';
import { type AcquireResult, type ContentionAsk, type ContentionView, type LeaderToken, type ShardAsk } from '@fenceline/core/store';
import { firstRow, msInterval, rows, type Executor } from './db';
import { deposed } from './lead';
import { shardLeaseFromRow, toDate, toNumber } from './rows';

/** Fixes the shard count on first call; `do update` (a no-op) makes a racing caller read the winner's row. */
export async function initCluster(db: Executor, shardCount: number): Promise<{ shardCount: number }> {
  const row = await firstRow(
    db,
    sql`insert into cluster_config (id, shard_count) values (1, ${shardCount})
        on conflict (id) do update set shard_count = cluster_config.shard_count
        returning shard_count`,
  );
  return { shardCount: toNumber(row?.shard_count) };
}

/**
 * Takes a shard in one statement. The upsert's WHERE lets it through only when the shard
 * is unheld, released or expired, or held live under this node id; a live lease of
 * another node makes it return nothing. Every take raises the epoch, so every token
 * issued before is dead: a live lease under our own id belongs to an earlier process of
 * the same id (restarted before its lease ran out) or to a leader this process dropped,
 * and either may still hold the old token. Renewals go through renewShard. The
 * `prev` CTE reads the row as it was, to report who led before and why it changed hands
 * (under a race it may be a moment old; the decision itself is re-checked on the locked row).
 * The row is locked FOR UPDATE first: see leadCte for why the takeover must wait for the
 * writes in flight under the old epoch.
 */
export async function acquireShard(db: Executor, { shard, nodeId, ttlMs }: ShardAsk): Promise<AcquireResult | null> {
  const row = await firstRow(
    db,
    sql`with prev as (select holder, epoch, expires_at > now() as live from shard_leases where shard = ${shard}),
        locked as materialized (select shard from shard_leases where shard = ${shard} for update),
        up as (
          insert into shard_leases as l (shard, holder, epoch, expires_at, acquired_at)
          select ${shard}, ${nodeId}, 1, now() + ${msInterval(ttlMs)}, now()
          -- Evaluated first, so the row is locked FOR UPDATE before the epoch moves: that
          -- waits for every in-flight leader write, whose lead check holds FOR KEY SHARE
          -- (lead.ts), which the upsert's own lock would not wait for.
          where (select count(*) from locked) >= 0
          on conflict (shard) do update set
            epoch = l.epoch + 1,
            acquired_at = now(),
            holder = excluded.holder,
            expires_at = excluded.expires_at
          where l.holder is null or l.holder = excluded.holder or l.expires_at <= now()
          returning l.epoch, l.expires_at
        )
        select up.epoch, up.expires_at,
          (select holder from prev) as prev_holder,
          (select epoch from prev) as prev_epoch,
          (select live from prev) as prev_live,
          exists (select 1 from prev) as had_row
        from up`,
  );
  if (!row) return null;
  const token: LeaderToken = { shard, nodeId, epoch: toNumber(row.epoch) };
  const expiresAt = toDate(row.expires_at);
  const prevHolder = (row.prev_holder as string | null) ?? null;
  if (row.had_row !== true) return { token, expiresAt, previousHolder: null, reason: 'new' };
  if (prevHolder === nodeId && row.prev_live === true) return { token, expiresAt, previousHolder: null, reason: 'reclaimed' };
  if (prevHolder === null) {
    // An unheld row with epoch 0 was never led; a later one was given up by releaseShard.
    return { token, expiresAt, previousHolder: null, reason: toNumber(row.prev_epoch) === 0 ? 'new' : 'released' };
  }
  return { token, expiresAt, previousHolder: prevHolder, reason: 'expired' };
}

/** Extends a live lease of the token's node and epoch; anything else means another node leads now. */
export async function renewShard(db: Executor, token: LeaderToken, ttlMs: number): Promise<Date> {
  const row = await firstRow(
    db,
    sql`update shard_leases set expires_at = now() + ${msInterval(ttlMs)}
        where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch} and expires_at > now()
        returning expires_at`,
  );
  if (!row) throw deposed(token, 'renewShard');
  return toDate(row.expires_at);
}

/**
 * Gives the shard up at once: no holder, expired now. The epoch stays, so the next
 * acquirer raises it. Releasing a shard this token no longer leads is a no-op.
 */
export async function releaseShard(db: Executor, token: LeaderToken): Promise<void> {
  await rows(
    db,
    sql`update shard_leases set holder = null, expires_at = now()
        where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch}`,
  );
}

export async function listShards(db: Executor): Promise<ShardLeaseRow[]> {
  const result = await rows(db, sql`select shard, holder, epoch, expires_at, acquired_at from shard_leases order by shard`);
  return result.map(shardLeaseFromRow);
}

/**
 * One statement per tick and node: stamps a serving node's presence (a row refreshed
 * within the last tenth of the window is left alone) and reads every shard lease with the
 * nodes serving. The node's own row is listed by what it says now, not by its stamp. The
 * stamp runs though nothing reads it: PostgreSQL runs every data-modifying CTE.
 */
export async function contentionView(db: Executor, { nodeId, liveWindowMs, serving }: ContentionAsk): Promise<ContentionView> {
  checkContention(nodeId, liveWindowMs);
  const result = await rows(
    db,
    sql`with stamp as (
          insert into scheduler_nodes as n (id, last_seen) select ${nodeId}, now() where ${serving}
          on conflict (id) do update set last_seen = now()
          where n.last_seen < now() - ${msInterval(Math.floor(liveWindowMs / 10))}
        ),
        alive as (
          select coalesce(array_agg(id order by id collate "C"), '{}') as ids from (
            select id from scheduler_nodes where last_seen > now() - ${msInterval(liveWindowMs)} and id <> ${nodeId}
            union all select ${nodeId}::text where ${serving}
          ) a
        )
        select now() as now, (select ids from alive) as nodes, s.shard, s.holder, s.epoch, s.expires_at, s.acquired_at
        from (select 1) as one left join shard_leases s on true
        order by s.shard`,
  );
  const first = result[0];
  return {
    now: toDate(first?.now),
    nodes: ((first?.nodes as string[] | null) ?? []).map(String),
    shards: result.filter((r) => r.shard !== null && r.shard !== undefined).map(shardLeaseFromRow),
  };
}

export async function leaveCluster(db: Executor, nodeId: string): Promise<void> {
  await rows(db, sql`delete from scheduler_nodes where id = ${nodeId}`);
}
