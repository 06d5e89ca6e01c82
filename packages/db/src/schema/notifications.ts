import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: 'date' });

/**
 * Where notifications go. The secret signs every body sent to the channel (HMAC-SHA256);
 * it is read only by the leader that delivers, never by a list.
 */
export const notificationChannels = pgTable(
  'notification_channels',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    name: text('name').notNull(),
    kind: text('kind', { enum: ['webhook', 'slack'] }).notNull(),
    url: text('url').notNull(),
    secret: text('secret'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [check('notification_channels_kind_check', sql`${t.kind} in ('webhook', 'slack')`), uniqueIndex('notification_channels_name_idx').on(t.name)],
);

/** What is sent where: an event of one DAG (or of every DAG, dag_id null) to a channel. */
export const notificationRules = pgTable(
  'notification_rules',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    channelId: bigint('channel_id', { mode: 'number' })
      .notNull()
      .references(() => notificationChannels.id, { onDelete: 'cascade' }),
    dagId: text('dag_id'),
    event: text('event', { enum: ['run_failed', 'task_failed', 'run_recovered', 'deadline_missed', 'shard_leaderless', 'pool_no_worker'] }).notNull(),
    /** Timed events only: a deadline after the scheduled time, or how long a shard or pool may go without a leader or worker. */
    afterSeconds: integer('after_seconds'),
    /** pool_no_worker only: the pool watched (null: every pool). */
    pool: text('pool'),
    createdAt: ts('created_at').notNull().defaultNow(),
  },
  (t) => [
    check('notification_rules_event_check', sql`${t.event} in ('run_failed', 'task_failed', 'run_recovered', 'deadline_missed', 'shard_leaderless', 'pool_no_worker')`),
    index('notification_rules_channel_idx').on(t.channelId),
  ],
);

/**
 * One notification per event and rule, with its delivery. The dedupe key is the
 * idempotency key: an event queued twice (a retry, two leaders) is one row. Rule and channel
 * ids carry no foreign key, so a dead letter outlives the channel it was meant for.
 */
export const notifications = pgTable(
  'notifications',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    dedupeKey: text('dedupe_key').notNull(),
    ruleId: bigint('rule_id', { mode: 'number' }).notNull(),
    channelId: bigint('channel_id', { mode: 'number' }).notNull(),
    shard: integer('shard').notNull(),
    // null for a cluster event (a shard without a leader, a pool without a worker).
    dagId: text('dag_id'),
    event: text('event', { enum: ['run_failed', 'task_failed', 'run_recovered', 'deadline_missed', 'shard_leaderless', 'pool_no_worker'] }).notNull(),
    payload: jsonb('payload').notNull(),
    state: text('state', { enum: ['pending', 'delivered', 'dead'] })
      .notNull()
      .default('pending'),
    attempts: integer('attempts').notNull().default(0),
    nextAttemptAt: ts('next_attempt_at').notNull().defaultNow(),
    lastError: text('last_error'),
    claimedEpoch: bigint('claimed_epoch', { mode: 'number' }),
    createdAt: ts('created_at').notNull().defaultNow(),
    deliveredAt: ts('delivered_at'),
  },
  (t) => [
    check('notifications_state_check', sql`${t.state} in ('pending', 'delivered', 'dead')`),
    uniqueIndex('notifications_dedupe_key_idx').on(t.dedupeKey),
    // A leader reads its shard's due notifications by this partial index.
    index('notifications_due_idx')
      .on(t.shard, t.nextAttemptAt)
      .where(sql`${t.state} = 'pending'`),
    index('notifications_state_idx').on(t.state, t.id),
  ],
);
