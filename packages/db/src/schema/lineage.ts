import { sql } from 'drizzle-orm';
import { bigint, check, integer, smallint, pgTable, timestamp } from 'drizzle-orm/pg-core';

/**
 * One row: the PostgreSQL timeline the store last ran on. A promoted standby starts a new
 * timeline; if it was not synchronous it may lack writes that were acknowledged, fence
 * grants among them, and would hand those fences out again. The first node to see a new
 * timeline raises every open job's fence and every shard's epoch past anything the lost
 * writes could have issued (store/lineage.ts), in the same transaction that records it.
 */
export const storeLineage = pgTable(
  'store_lineage',
  {
    id: smallint('id').primaryKey().default(1),
    timeline: integer('timeline').notNull(),
    /** How many times fences were raised for a new timeline. */
    fencings: bigint('fencings', { mode: 'number' }).notNull().default(0),
    changedAt: timestamp('changed_at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
  },
  (t) => [check('store_lineage_single_row', sql`${t.id} = 1`)],
);
