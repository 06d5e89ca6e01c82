import { sql } from 'drizzle-orm';
import { boolean, index, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import type { DagSpec } from '@fenceline/core';

/**
 * A DAG is a mutable head (`dags`) over immutable versions (`dag_versions`). Runs pin a
 * version, so editing a DAG never changes what an in-flight run executes. The head's
 * (id, current_version) references dag_versions through dags_current_version_fk, a
 * deferred key written by hand in migration 0003 (drizzle cannot declare one).
 */
export const dags = pgTable(
  'dags',
  {
    id: text('id').primaryKey(),
    shard: integer('shard').notNull(),
    currentVersion: integer('current_version').notNull(),
    paused: boolean('paused').notNull().default(false),
    /** The next slot the tick looks at; null for manual DAGs. */
    nextRunAt: timestamp('next_run_at', { withTimezone: true, precision: 6, mode: 'date' }),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [
    // The tick asks `shard = any($shards) and next_run_at <= now()` for unpaused DAGs; with
    // shard leading and the predicate in the index, that is a range scan per shard even
    // with 100,000 DAGs, and paused or manual DAGs cost nothing.
    index('dags_due_idx')
      .on(t.shard, t.nextRunAt)
      .where(sql`not ${t.paused} and ${t.nextRunAt} is not null`),
    // The console sorts the DAG list by these (id breaking ties); with the tie-breaker in
    // the index a page is an index walk instead of a sort of every DAG.
    index('dags_updated_at_id_idx').on(t.updatedAt, t.id),
    index('dags_next_run_at_id_idx').on(t.nextRunAt, t.id),
  ],
);

export const dagVersions = pgTable(
  'dag_versions',
  {
    dagId: text('dag_id')
      .notNull()
      .references(() => dags.id, { onDelete: 'cascade' }),
    version: integer('version').notNull(),
    spec: jsonb('spec').$type<DagSpec>().notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.dagId, t.version] })],
);

/**
 * The answer an apply with a request key gave, kept so the same request sent again (a
 * client's retry after a lost answer) returns it and writes nothing. It is written in the
 * put's own transaction, under the head row's lock, so a put and its key land together.
 */
export const dagRequestKeys = pgTable(
  'dag_request_keys',
  {
    dagId: text('dag_id')
      .notNull()
      .references(() => dags.id, { onDelete: 'cascade' }),
    requestKey: text('request_key').notNull(),
    /**
     * Who sent the key (a user's id, `cli`): a key is one caller's, so another caller's
     * request with the same key is a request of its own (docs/security.md).
     */
    requestOwner: text('request_owner').notNull().default(''),
    /** The SHA-256 of what the keyed request asked; a reuse of the key with another request is refused. */
    requestFingerprint: text('request_fingerprint'),
    version: integer('version').notNull(),
    created: boolean('created').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ columns: [t.dagId, t.requestOwner, t.requestKey] })],
);
