import { sql } from 'drizzle-orm';
import { bigint, check, integer, jsonb, pgTable, primaryKey, text, timestamp } from 'drizzle-orm/pg-core';
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
    /** The effect outcomes the accepted attempt reported (@fenceline/effects); null when it reported none. */
    effects: jsonb('effects'),
    writtenAt: timestamp('written_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('results_outcome_check', sql`${t.outcome} in ('succeeded', 'failed')`)],
);

/**
 * Every attempt's result, one row per (job, fence): the result store above keeps only the
 * highest fence, and an operator looking at a job that failed twice before it succeeded
 * needs each failure's error and logs. Written by the same statement as the result, chained
 * to the job rows its fence check let through, so a refused write adds no attempt either.
 * Attempts whose lease expired or was handed back wrote no result and have no row.
 */
export const jobAttempts = pgTable(
  'job_attempts',
  {
    jobId: bigint('job_id', { mode: 'number' })
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    fence: bigint('fence', { mode: 'number' }).notNull(),
    /** The job's attempt number when this result was written (1 for the first). */
    attempt: integer('attempt').notNull(),
    workerId: text('worker_id').notNull(),
    outcome: text('outcome', { enum: ['succeeded', 'failed'] }).notNull(),
    output: jsonb('output'),
    error: text('error'),
    logs: text('logs'),
    /** The effect outcomes this attempt reported, in the order reported; null when it reported none. */
    effects: jsonb('effects'),
    /** When the lease of this attempt was granted (store time). */
    startedAt: timestamp('started_at', { withTimezone: true, precision: 6, mode: 'date' }),
    endedAt: timestamp('ended_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'job_attempts_pk', columns: [t.jobId, t.fence] }), check('job_attempts_outcome_check', sql`${t.outcome} in ('succeeded', 'failed')`)],
);

/**
 * The log lines of running attempts, as their workers send them with each renewal, so the
 * console can tail a job while it runs. Appended by the renewal's own statement, chained to
 * the job rows its fence check renewed: only the current holder's fence appends, and a
 * refused renewal appends nothing. The whole log of a finished attempt is its result's.
 */
export const jobLogChunks = pgTable(
  'job_log_chunks',
  {
    jobId: bigint('job_id', { mode: 'number' })
      .notNull()
      .references(() => jobs.id, { onDelete: 'cascade' }),
    fence: bigint('fence', { mode: 'number' }).notNull(),
    seq: integer('seq').notNull(),
    text: text('text').notNull(),
    writtenAt: timestamp('written_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [primaryKey({ name: 'job_log_chunks_pk', columns: [t.jobId, t.fence, t.seq] })],
);
