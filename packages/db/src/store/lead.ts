import { sql, type SQL } from 'drizzle-orm';
import { DeposedLeaderError, type LeaderToken } from '@fenceline/core';
import type { RawRow } from './db';

/**
 * The leadership check every leader write makes in the same statement as the write.
 *
 * `lead` selects the shard's lease row only if the token's node still holds it under the
 * token's epoch and the lease is live by the store's clock, and locks it FOR SHARE. The
 * lock is the point: a takeover is an UPDATE of that row, so it waits until in-flight
 * leader writes commit, and a leader write that starts after a takeover re-reads the row
 * and finds the new epoch. Either way no write of a deposed leader lands (invariant I8).
 */
export function leadCte(token: LeaderToken): SQL {
  return sql`lead as (
    select shard from shard_leases
    where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch} and expires_at > now()
    for share
  )`;
}

/**
 * The final SELECT of a leader statement whose write CTE is named `w`. It always returns
 * at least one row: `led` says whether the lead check passed, and each written row
 * follows with `w_found` set (its never-null `keyColumn` is present). This tells "deposed"
 * apart from "nothing matched" without a second round trip.
 */
export function selectWithLead(keyColumn: string): SQL {
  return sql`select exists (select 1 from lead) as led, ${sql.raw(`w.${keyColumn}`)} is not null as w_found, w.*
    from (select 1) as one left join w on true`;
}

/** Throws DeposedLeaderError unless the statement's lead check passed; returns the written rows. */
export function writtenRows(result: RawRow[], token: LeaderToken, operation: string): RawRow[] {
  const led = result[0]?.led === true;
  if (!led) throw deposed(token, operation);
  return result.filter((r) => r.w_found === true);
}

export function deposed(token: LeaderToken, operation: string): DeposedLeaderError {
  return new DeposedLeaderError(
    `${operation} refused: node ${token.nodeId} no longer leads shard ${token.shard} under epoch ${token.epoch}`,
    { shard: token.shard, nodeId: token.nodeId, epoch: token.epoch, operation },
  );
}
