import { sql, type SQL } from 'drizzle-orm';
import { StoreUnavailableError } from '@fenceline/core';

/**
 * Whether the store accepts a result only from a server that replicates it synchronously
 * (docs/postgresql-ha.md). pg_auto_failover runs a primary whose standby it judges
 * unhealthy as `wait_primary`, with `synchronous_standby_names` emptied: its commits are
 * acknowledged from its own disk alone, and a failover to a standby that had not received
 * them loses them. A result acknowledged there would be gone with its worker's copy.
 */
export interface Durability {
  requireSyncStandby: boolean;
}

export const NO_SYNC_REQUIREMENT: Durability = { requireSyncStandby: false };

/**
 * The statement's own check, read by the backend that commits it: a standby named for
 * synchronous replication and a commit level that waits for it. A statement that fails it
 * writes nothing, so its outcome is known.
 */
export function syncStandbyCheck(d: Durability): SQL {
  if (!d.requireSyncStandby) return sql`true`;
  return sql`(current_setting('synchronous_standby_names') <> ''
    and current_setting('synchronous_commit') in ('on', 'remote_apply', 'remote_write'))`;
}

/** What a result write answers when the server it reached would commit it without a synchronous standby. */
export function noSyncStandby(): StoreUnavailableError {
  return new StoreUnavailableError('the database is unavailable (it commits without a synchronous standby; nothing was written)');
}
