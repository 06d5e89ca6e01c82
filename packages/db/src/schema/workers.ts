import { index, integer, jsonb, pgTable, text, timestamp, uniqueIndex } from 'drizzle-orm/pg-core';

/** Workers register once and heartbeat in batches through their scheduler node. */
export const workers = pgTable(
  'workers',
  {
    id: text('id').primaryKey(),
    slots: integer('slots').notNull(),
    nodeId: text('node_id'),
    meta: jsonb('meta').$type<Record<string, unknown>>().notNull().default({}),
    startedAt: timestamp('started_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
    lastSeen: timestamp('last_seen', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
    /**
     * The worker's current session: the SHA-256 of the secret its process registered
     * with. A lease is granted to it, and a process that registers anew replaces it, so
     * the old process's writes are refused from then on.
     */
    session: text('session'),
    /** The credential the current session registered with; null in development mode. */
    credentialId: text('credential_id'),
  },
  // "Workers seen within N ms" is a range scan on last_seen.
  (t) => [index('workers_last_seen_idx').on(t.lastSeen)],
);

/**
 * Worker credentials issued by an operator (`fenceline worker-token create`). Only the
 * SHA-256 of the secret is kept; the secret is printed once, when it is created. A
 * credential may act only as worker ids of its pool (`<pool>-...`).
 */
export const workerCredentials = pgTable(
  'worker_credentials',
  {
    id: text('id').primaryKey(),
    pool: text('pool').notNull(),
    secretHash: text('secret_hash').notNull(),
    createdAt: timestamp('created_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
    revokedAt: timestamp('revoked_at', { withTimezone: true, precision: 6, mode: 'date' }),
    lastUsedAt: timestamp('last_used_at', { withTimezone: true, precision: 6, mode: 'date' }),
  },
  (t) => [uniqueIndex('worker_credentials_secret_hash_key').on(t.secretHash)],
);
