import { sql } from 'drizzle-orm';
import { bigint, check, index, integer, jsonb, pgTable, text, timestamp, unique, uniqueIndex } from 'drizzle-orm/pg-core';
import type { RunParams } from '@fenceline/core';
import { backfills } from './backfills';
import { dags } from './dags';

const ts = (name: string) => timestamp(name, { withTimezone: true, precision: 6, mode: 'date' });

/**
 * One run per (dag, scheduled_at): the unique constraint is what makes a tick that runs
 * twice, or two leaders that race across a failover, create one run (invariant I4).
 *
 * A run's (dag_id, dag_version) names a stored version without a foreign key of its own:
 * every insert copies the version from the DAG's head row in the same statement, and the
 * head's version is held to an existing one by dags_current_version_fk (migration 0003).
 * A key on runs made every created run lock its dag_versions row, which wrote that row
 * once per run and cost about 30% of the tick's creation statement.
 */
export const runs = pgTable(
  'runs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    dagId: text('dag_id')
      .notNull()
      .references(() => dags.id, { onDelete: 'cascade' }),
    dagVersion: integer('dag_version').notNull(),
    shard: integer('shard').notNull(),
    scheduledAt: ts('scheduled_at').notNull(),
    trigger: text('trigger', { enum: ['schedule', 'manual', 'backfill', 'rerun'] }).notNull(),
    state: text('state', { enum: ['queued', 'running', 'succeeded', 'failed', 'cancelled'] }).notNull(),
    createdAt: ts('created_at').notNull().defaultNow(),
    startedAt: ts('started_at'),
    endedAt: ts('ended_at'),
    /**
     * The key a manual trigger was sent with (the console makes one per click), so a
     * request sent twice queues one run; null for scheduled runs and keyless triggers.
     */
    requestKey: text('request_key'),
    /**
     * Who sent the key (a user's id, `cli`): a key is one caller's, so another caller's
     * request with the same key is a request of its own (docs/security.md).
     */
    requestOwner: text('request_owner').notNull().default(''),
    /** The SHA-256 of what the keyed request asked; a reuse of the key with another request is refused. Null without a key. */
    requestFingerprint: text('request_fingerprint'),
    /**
     * The run's resolved parameters: a manual trigger's values checked against its DAG
     * version's declaration with the defaults filled in, or the defaults for a scheduled run.
     */
    params: jsonb('params').$type<RunParams>().notNull().default({}),
    /** The backfill that created the run; null for every other run. */
    backfillId: bigint('backfill_id', { mode: 'number' }).references(() => backfills.id, { onDelete: 'set null' }),
  },
  (t) => [
    unique('runs_dag_scheduled_at_key').on(t.dagId, t.scheduledAt),
    uniqueIndex('runs_dag_request_key_idx')
      .on(t.dagId, t.requestOwner, t.requestKey)
      .where(sql`${t.requestKey} is not null`),
    index('runs_shard_state_idx').on(t.shard, t.state),
    index('runs_dag_id_idx').on(t.dagId, t.id),
    // A backfill's leader counts its unfinished runs on every step, and the console its progress.
    index('runs_backfill_idx')
      .on(t.backfillId, t.state)
      .where(sql`${t.backfillId} is not null`),
    // Keyset pages of runs (pageRuns) in (scheduled_at, id) order: all runs, and runs of
    // one state. A DAG's runs page on runs_dag_scheduled_at_key.
    index('runs_scheduled_at_id_idx').on(t.scheduledAt, t.id),
    index('runs_state_scheduled_at_idx').on(t.state, t.scheduledAt, t.id),
    check('runs_state_check', sql`${t.state} in ('queued', 'running', 'succeeded', 'failed', 'cancelled')`),
    check('runs_trigger_check', sql`${t.trigger} in ('schedule', 'manual', 'backfill', 'rerun')`),
  ],
);

/**
 * A job is one task of one run. Its `fence` rises by one on every lease and every
 * revocation; every worker write must carry the current fence (docs/architecture.md, rules 1-5).
 */
export const jobs = pgTable(
  'jobs',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    runId: bigint('run_id', { mode: 'number' })
      .notNull()
      .references(() => runs.id, { onDelete: 'cascade' }),
    dagId: text('dag_id').notNull(),
    shard: integer('shard').notNull(),
    taskId: text('task_id').notNull(),
    state: text('state', { enum: ['waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled'] }).notNull(),
    attempt: integer('attempt').notNull().default(0),
    maxAttempts: integer('max_attempts').notNull(),
    fence: bigint('fence', { mode: 'number' }).notNull().default(0),
    holder: text('holder'),
    /**
     * The session (the hash of its secret, see workers.session) the lease was granted to;
     * every write for the lease must present it (docs/security.md).
     */
    holderSession: text('holder_session'),
    leaseExpiresAt: ts('lease_expires_at'),
    nextAttemptAt: ts('next_attempt_at'),
    priority: integer('priority').notNull().default(0),
    retryBackoffMs: integer('retry_backoff_ms').notNull(),
    retryBackoffMaxMs: integer('retry_backoff_max_ms').notNull(),
    timeoutMs: integer('timeout_ms').notNull(),
    readyAt: ts('ready_at'),
    leasedAt: ts('leased_at'),
    /** The holder's last renewal of the current lease; null until it renews once. */
    renewedAt: ts('renewed_at'),
    /**
     * Leases that expired without one renewal: lost on the way to their worker (a node
     * that crashed after granting), or held by a worker that stopped at once. The first
     * LIMITS.maxLostLeases of them do not use up an attempt.
     */
    lostLeases: integer('lost_leases').notNull().default(0),
    endedAt: ts('ended_at'),
    lastError: text('last_error'),
    /**
     * Units of resource limits the job holds while leased (schema/resources.ts), copied from
     * its task when the run starts; null for a job that consumes none (most), which the
     * grant statement leases without touching the limits.
     */
    resources: jsonb('resources'),
  },
  (t) => [
    unique('jobs_run_task_key').on(t.runId, t.taskId),
    // The sweeper of one shard finds expired leases by range scan on this partial index.
    index('jobs_leased_expiry_idx')
      .on(t.shard, t.leaseExpiresAt)
      .where(sql`${t.state} = 'leased'`),
    // "What does this worker hold" (a worker reconnecting, the console) reads this one.
    index('jobs_leased_holder_idx')
      .on(t.holder)
      .where(sql`${t.state} = 'leased'`),
    // The console's "who waits for a resource limit" reads only these few rows.
    index('jobs_ready_limited_idx')
      .on(t.shard)
      .where(sql`${t.state} = 'ready' and ${t.resources} is not null`),
    check('jobs_state_check', sql`${t.state} in ('waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'skipped', 'cancelled')`),
    check('jobs_attempt_check', sql`${t.attempt} >= 0 and ${t.maxAttempts} >= 1`),
    // A live lease always names its holder and its expiry.
    check('jobs_leased_check', sql`${t.state} <> 'leased' or (${t.holder} is not null and ${t.leaseExpiresAt} is not null)`),
  ],
);
