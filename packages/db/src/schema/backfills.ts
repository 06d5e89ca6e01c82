import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';
import { dags } from './dags';

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: 'date' });

/**
 * A backfill of a DAG over [from_at, to_at): its shard's leader creates one run per slot
 * of the schedule of `dag_version`, at most `max_active_runs` of them unfinished at a
 * time, and records in the same transaction where it got to (`next_slot_at`, null once
 * every slot was created or skipped), so a new leader resumes exactly there. The runs it
 * created carry its id (runs.backfill_id); `ended_at` is null while the leader still has
 * something to do for it, which is what the leader's read of open backfills asks by index.
 */
export const backfills = pgTable(
  'backfills',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    dagId: text('dag_id')
      .notNull()
      .references(() => dags.id, { onDelete: 'cascade' }),
    dagVersion: integer('dag_version').notNull(),
    shard: integer('shard').notNull(),
    fromAt: ts('from_at').notNull(),
    toAt: ts('to_at').notNull(),
    maxActiveRuns: integer('max_active_runs').notNull(),
    mode: text('mode', { enum: ['skip', 'rerun'] }).notNull(),
    state: text('state', { enum: ['running', 'done', 'cancelled'] }).notNull(),
    totalSlots: integer('total_slots').notNull(),
    nextSlotAt: ts('next_slot_at'),
    createdRuns: integer('created_runs').notNull().default(0),
    skippedSlots: integer('skipped_slots').notNull().default(0),
    /** Slots whose ended run a rerun-mode backfill took over and cleared to run again. */
    rerunRuns: integer('rerun_runs').notNull().default(0),
    requestedBy: text('requested_by').notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    endedAt: ts('ended_at'),
    /**
     * The key a request was sent with (an API client's Idempotency-Key, the CLI's
     * --idempotency-key), so a request sent twice starts one backfill; null without one.
     */
    requestKey: text('request_key'),
    /**
     * Who sent the key (a user's id, `cli`): a key is one caller's, so another caller's
     * request with the same key is a request of its own (docs/security.md).
     */
    requestOwner: text('request_owner').notNull().default(''),
    /** The SHA-256 of what the keyed request asked; a reuse of the key with another request is refused. Null without a key. */
    requestFingerprint: text('request_fingerprint'),
  },
  (t) => [
    index('backfills_open_idx')
      .on(t.shard, t.id)
      .where(sql`${t.endedAt} is null`),
    index('backfills_dag_idx').on(t.dagId, t.id),
    uniqueIndex('backfills_dag_request_key_idx')
      .on(t.dagId, t.requestOwner, t.requestKey)
      .where(sql`${t.requestKey} is not null`),
    check('backfills_range_check', sql`${t.fromAt} < ${t.toAt} and ${t.maxActiveRuns} >= 1 and ${t.totalSlots} >= 1`),
    check('backfills_mode_check', sql`${t.mode} in ('skip', 'rerun')`),
    check('backfills_state_check', sql`${t.state} in ('running', 'done', 'cancelled')`),
  ],
);
