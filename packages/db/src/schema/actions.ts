import { sql } from 'drizzle-orm';
import { bigint, boolean, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { runs } from './runs';

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: 'date' });

/**
 * Operator actions on runs (cancel, clear, retry_failed, mark_success, mark_failed). A
 * request is stored pending before anything changes and is applied by the shard's leader
 * in one transaction with the job changes it makes, so an action is applied exactly once
 * even when the leader crashes before or after it: the next leader finds it pending, or
 * finds it applied and writes nothing.
 */
export const runActions = pgTable(
  'run_actions',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: bigint('run_id', { mode: 'number' })
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    dagId: text('dag_id').notNull(),
    shard: integer('shard').notNull(),
    kind: text('kind', { enum: ['cancel', 'clear', 'retry_failed', 'mark_success', 'mark_failed'] }).notNull(),
    taskIds: jsonb('task_ids').notNull(),
    downstream: boolean('downstream').notNull().default(false),
    reason: text('reason'),
    requestedBy: text('requested_by').notNull(),
    requestKey: text('request_key'),
    /**
     * Who sent the key (a user's id, `cli`): a key is one caller's, so another caller's
     * request with the same key is a request of its own (docs/security.md).
     */
    requestOwner: text('request_owner').notNull().default(''),
    /** The SHA-256 of what the keyed request asked; a reuse of the key with another request is refused. Null without a key. */
    requestFingerprint: text('request_fingerprint'),
    state: text('state', { enum: ['pending', 'applied'] })
      .notNull()
      .default('pending'),
    result: jsonb('result'),
    createdAt: ts('created_at').notNull().defaultNow(),
    appliedAt: ts('applied_at'),
  },
  (t) => [
    check('run_actions_kind_check', sql`${t.kind} in ('cancel', 'clear', 'retry_failed', 'mark_success', 'mark_failed')`),
    check('run_actions_state_check', sql`${t.state} in ('pending', 'applied')`),
    // A leader taking over a shard reads its pending actions by this partial index.
    index('run_actions_pending_idx')
      .on(t.shard, t.id)
      .where(sql`${t.state} = 'pending'`),
    index('run_actions_run_idx').on(t.runId, t.id),
    uniqueIndex('run_actions_request_key_idx')
      .on(t.runId, t.requestOwner, t.requestKey)
      .where(sql`${t.requestKey} is not null`),
  ],
);
