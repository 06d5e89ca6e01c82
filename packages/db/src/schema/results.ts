import { sql } from 'drizzle-orm';
import { bigint, check, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';
import { jobs } from './runs';

/**
 * The result store: one row per job holding the highest fence it ever accepted. A write
 * with a lower fence is refused (upsert `where results.fence < excluded.fence`), so a
 * fenced-off worker can never overwrite the result of the lease that superseded it.
 */
export const results = pgTable(
  'results',
  {
    jobId: bigint('job_id', { mode: 'number' })
      .primaryKey()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    fence: bigint('fence', { mode: 'number' }).notNull(),
    workerId: text('worker_id').notNull(),
    outcome: text('outcome', { enum: ['succeeded', 'failed'] }).notNull(),
    output: jsonb('output'),
    error: text('error'),
    logs: text('logs'),
    writtenAt: timestamp('written_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('results_outcome_check', sql`${t.outcome} in ('succeeded', 'failed')`)],
);
