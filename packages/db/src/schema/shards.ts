import { sql } from 'drizzle-orm';
import { bigint, check, integer, pgTable, smallint, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Shard leadership is a lease with an epoch. Taking a shard over locks this row FOR UPDATE
 * and raises the epoch; every leader write locks it FOR KEY SHARE and checks the epoch in
 * the same statement, so a takeover waits for in-flight leader writes, a deposed leader
 * writes nothing, and the leader's renewals (which only move the expiry) wait for nobody.
 */
export const shardLeases = pgTable('shard_leases', {
  shard: integer('shard').primaryKey(),
  holder: text('holder'),
  epoch: bigint('epoch', { mode: 'number' }).notNull().default(0),
  expiresAt: timestamp('expires_at', { withTimezone: true, precision: 6, mode: 'date' }),
  acquiredAt: timestamp('acquired_at', { withTimezone: true, precision: 6, mode: 'date' }),
});

/** One row: the shard count is fixed when the cluster is first initialised. */
export const clusterConfig = pgTable(
  'cluster_config',
  {
    id: smallint('id').primaryKey().default(1),
    shardCount: integer('shard_count').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('cluster_config_single_row', sql`${t.id} = 1`), check('cluster_config_shard_count_check', sql`${t.shardCount} > 0`)],
);

/**
 * Scheduler nodes seen alive: each node stamps its row once a tick when it reads the
 * shard leases, so a node that leads nothing yet is still counted when the nodes share
 * the shards out. A graceful stop deletes the row; a crashed node's row simply ages out.
 */
export const schedulerNodes = pgTable('scheduler_nodes', {
  id: text('id').primaryKey(),
  lastSeen: timestamp('last_seen', { withTimezone: true, precision: 6, mode: 'date' }).notNull(),
  startedAt: timestamp('started_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
});
