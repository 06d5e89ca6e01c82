import { index, integer, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

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
  },
  // "Workers seen within N ms" is a range scan on last_seen.
  (t) => [index('workers_last_seen_idx').on(t.lastSeen)],
);
