import { sql } from 'drizzle-orm';
import { bigint, check, integer, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
import { jobs } from './runs';

/**
 * Named resource limits (core resources/limits.ts): how many units of one external system
 * jobs of any DAG may hold at once across the cluster. A grant of a job that consumes a
 * limit first locks these rows, so two nodes' grants of limited jobs are serialised and
 * each sees the holds the other committed.
 */
export const resourceLimits = pgTable(
  'resource_limits',
  {
    name: text('name').primaryKey(),
    capacity: integer('capacity').notNull(),
    updatedAt: timestamp('updated_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('resource_limits_capacity_check', sql`${t.capacity} >= 1`)],
);

/**
 * The units a lease holds: one row per (job, limit), written by the statement that grants
 * the lease, under the lease's fence. A hold counts only while its job is leased under that
 * same fence, so every way a lease ends (a result, an expiry, a revoke, a cancel) releases
 * it without a write of its own; rows left behind are deleted by the next limited grant.
 */
export const resourceHolds = pgTable(
  'resource_holds',
  {
    jobId: bigint('job_id', { mode: 'number' })
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    name: text('name').notNull(),
    fence: bigint('fence', { mode: 'number' }).notNull(),
    units: integer('units').notNull(),
  },
  (t) => [primaryKey({ name: 'resource_holds_pkey', columns: [t.jobId, t.name] }), check('resource_holds_units_check', sql`${t.units} >= 1`)],
);
