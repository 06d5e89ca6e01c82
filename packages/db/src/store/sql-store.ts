import type { DagSpecInput, EventRow } from '@fenceline/core';
import type { Store } from '@fenceline/core/store';
import type { Db } from './db';
import type { PutDagResult } from './dags';
import { NO_SYNC_REQUIREMENT, type Durability } from './durability';
import * as jobWrites from './job-writes';
import { onPool, type OverPool } from './on-pool';
import {
  sqlAuditStore,
  sqlCatalogueStore,
  sqlClusterStore,
  sqlEventStore,
  sqlLeaderStore,
  sqlNoticeWrites,
  sqlNotificationLeaderStore,
  sqlNotificationStore,
  sqlPeopleStore,
  sqlResourceLimitStore,
  sqlRunActionStore,
  sqlRunReadStore,
  sqlStoreExtras,
  sqlWorkerCredentialStore,
  sqlWorkerProtocolStore,
} from './roles';
import { sqlConnection } from './sql-connection';

/** The Store contract on PostgreSQL, with what tools and tests use beyond it. */
export interface SqlStore extends Store {
  /** The drizzle handle (over postgres.js) the store runs on now, for tools that need plain queries. */
  readonly db: Db;
  /** Several specs, all or none, in one transaction (what `fenceline apply` with many files needs). */
  putDags(specs: DagSpecInput[], shardCount: number): Promise<PutDagResult[]>;
  /** For the tests only (EventReadStore in @fenceline/core/testing); no role of the Store lists events. */
  listEvents(query: { afterId?: string; runId?: string; jobId?: string; type?: string; limit?: number }): Promise<EventRow[]>;
  /** Replaces the pool (see SqlConnection.reconnect). */
  reconnect(): Promise<void>;
  /** Tells the store a standby answered, so it replaces its pool (see SqlConnection.standbyAnswered). */
  standbyAnswered(): void;
}

/** The operations every role object of roles.ts does over a pool. */
type PoolOperations = Omit<SqlStore, 'db' | 'subscribe' | 'close' | 'reconnect' | 'standbyAnswered'>;

const operations = {
  ...sqlClusterStore,
  ...sqlCatalogueStore,
  ...sqlRunActionStore,
  ...sqlRunReadStore,
  ...sqlLeaderStore,
  ...sqlWorkerProtocolStore,
  ...sqlWorkerCredentialStore,
  ...sqlEventStore,
  ...sqlNoticeWrites,
  ...sqlPeopleStore,
  ...sqlAuditStore,
  ...sqlResourceLimitStore,
  ...sqlNotificationStore,
  ...sqlNotificationLeaderStore,
  ...sqlStoreExtras,
} satisfies OverPool<PoolOperations>;

/**
 * The Store on PostgreSQL: every role's operations (roles.ts) on one connection
 * (sql-connection.ts), which owns the pool, the notice subscriptions and their lifecycle.
 * `connectAgain` opens a new pool with the same settings, for reconnect(). `durability` says
 * whether a result or failure is accepted only from a server that replicates it
 * synchronously (openStore reads it from the environment).
 */
export function sqlStore(db: Db, connectAgain?: () => Db, durability: Durability = NO_SYNC_REQUIREMENT): SqlStore {
  const connection = sqlConnection(db, connectAgain);
  const durable: OverPool<Pick<PoolOperations, 'completeJobs' | 'failJob' | 'failJobs'>> = {
    completeJobs: (d, items) => jobWrites.completeJobs(d, items, durability),
    failJob: (d, ref, failure) => jobWrites.failJob(d, ref, failure, durability),
    failJobs: (d, items) => jobWrites.failJobs(d, items, durability),
  };
  return {
    ...onPool<PoolOperations>(connection, { ...operations, ...durable }),
    get db(): Db {
      return connection.db;
    },
    subscribe: connection.subscribe,
    close: connection.close,
    reconnect: connection.reconnect,
    standbyAnswered: connection.standbyAnswered,
  };
}
