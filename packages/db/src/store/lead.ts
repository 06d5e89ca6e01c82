import { sql, type SQL } from 'drizzle-orm';
import { DeposedLeaderError } from '@fenceline/core';
import { type LeaderGroup, type LeaderToken } from '@fenceline/core/store';
import { array, type RawRow } from './db';

/**
 * The leadership check every leader write makes in the same statement as the write.
 *
 * `lead` selects the shard's lease row only if the token's node still holds it under the
 * token's epoch and the lease is live by the store's clock, and locks it FOR KEY SHARE.
 * The lock is the point: a takeover (acquireShard) locks that row FOR UPDATE before it
 * raises the epoch, so it waits until in-flight leader writes commit, and a leader write
 * that starts after a takeover re-reads the row and finds the new epoch. Either way no
 * write of a deposed leader lands (invariant I8). KEY SHARE rather than SHARE so that the
 * leader's own renewal, an UPDATE of the expiry alone, neither waits for its writes nor
 * makes them wait: with several leader statements in flight at all times, a renewal
 * behind FOR SHARE locks could wait as long as the load lasted.
 */
export function leadCte(token: LeaderToken): SQL {
  return sql`lead as (
    select shard from shard_leases
    where shard = ${token.shard} and holder = ${token.nodeId} and epoch = ${token.epoch} and expires_at > now()
    for key share
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
  return new DeposedLeaderError(`${operation} refused: node ${token.nodeId} no longer leads shard ${token.shard} under epoch ${token.epoch}`, {
    shard: token.shard,
    nodeId: token.nodeId,
    epoch: token.epoch,
    operation,
  });
}

/**
 * Leader tokens as a set of rows: `unnest` of their shards, node ids and epochs, in the
 * order given, for the caller to name (`as t(shard, node_id, epoch)`, with ordinality or
 * not). Every statement that checks several tokens at once reads them through this.
 */
export function leaderTokensUnnest(tokens: LeaderToken[]): SQL {
  // The line break before the epochs is part of the statement's text: kept so that the
  // text sent (and the server's cached plan of it) is the one the grants always sent.
  return sql`unnest(${array(
    tokens.map((t) => t.shard),
    'int',
  )}, ${array(
    tokens.map((t) => t.nodeId),
    'text',
  )},
      ${array(
        tokens.map((t) => t.epoch),
        'bigint',
      )})`;
}

/**
 * The lead check of a statement that writes for several leaders at once. `t` numbers the
 * tokens (`g`, from 1, in the order given) and `lead` keeps those still leading, with their
 * shard, locking each lease row FOR KEY SHARE as `leadCte` does. Items carry the number of
 * their group, so each lands only through its own token and only in that token's shard.
 */
export function leadManyCte(tokens: LeaderToken[]): SQL {
  return sql`t as (
    select * from ${leaderTokensUnnest(tokens)} with ordinality as t(shard, node_id, epoch, g)
  ),
  lead as (
    select t.g, s.shard from shard_leases s join t on s.shard = t.shard and s.holder = t.node_id and s.epoch = t.epoch
    where s.expires_at > now()
    for key share of s
  )`;
}

/** The final SELECT of a multi-leader statement whose write CTE is `w`: `led` lists the groups that passed. */
export function selectWithLeadMany(): SQL {
  return sql`select (select coalesce(array_agg(g), '{}') from lead) as led, w.* from (select 1) as one left join w on true`;
}

/** Group numbers (from 1) whose lead check passed, read from a `selectWithLeadMany` result. */
export function ledGroups(result: RawRow[]): Set<number> {
  return new Set(((result[0]?.led as unknown[] | undefined) ?? []).map((g) => Number(g)));
}

/**
 * Per group, its result or the DeposedLeaderError of its token. `make` builds the result of
 * group `index` (from 0); it is only called for groups that passed the lead check.
 */
export function perGroup<T>(tokens: LeaderToken[], led: Set<number>, operation: string, make: (index: number) => T): (T | DeposedLeaderError)[] {
  return tokens.map((token, i) => (led.has(i + 1) ? make(i) : deposed(token, operation)));
}

/**
 * Where each key first appears across the groups of a multi-leader call (group `g`, item
 * `i`, the item), in order. One statement writes a row once, so a repeated key counts for
 * its first item only; keys that `valid` refuses (ids that cannot be row ids) are left out.
 */
export function firstOccurrences<T>(
  groups: LeaderGroup<T>[],
  key: (item: T) => string,
  valid: (key: string) => boolean = () => true,
): Map<string, { g: number; i: number; item: T }> {
  const first = new Map<string, { g: number; i: number; item: T }>();
  groups.forEach((group, g) =>
    group.items.forEach((item, i) => {
      const k = key(item);
      if (valid(k) && !first.has(k)) first.set(k, { g, i, item });
    }),
  );
  return first;
}
