import { bigint, index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/** The lifecycle event log (`lease:granted`, `write:fenced`, ...) the console and tests read. */
export const events = pgTable(
  'events',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp('at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
    type: text('type').notNull(),
    shard: integer('shard'),
    dagId: text('dag_id'),
    // No foreign keys: the log outlives what it talks about and must never block a write.
    runId: bigint('run_id', { mode: 'number' }),
    jobId: bigint('job_id', { mode: 'number' }),
    workerId: text('worker_id'),
    nodeId: text('node_id'),
    fence: bigint('fence', { mode: 'number' }),
    epoch: bigint('epoch', { mode: 'number' }),
    data: jsonb('data').$type<Record<string, unknown>>().notNull().default({}),
  },
  (t) => [index('events_run_id_idx').on(t.runId), index('events_job_id_idx').on(t.jobId), index('events_type_at_idx').on(t.type, t.at)],
);

/**
 * The keys of the event batches written so far. A node that lost the answer to a batch's
 * write sends the batch again under the same key, and the store keeps it once: the key's
 * insert and the events' insert are one statement, so either both are there or neither.
 */
export const eventBatches = pgTable('event_batches', {
  key: text('key').primaryKey(),
  at: timestamp('at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
});
