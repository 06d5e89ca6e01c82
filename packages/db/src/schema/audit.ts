import { bigint, index, jsonb, pgTable, text, timestamp } from 'drizzle-orm/pg-core';

/**
 * Who changed what, when and from where. The product only appends to it: the migrate step
 * adds a trigger (audit-guard.ts) that refuses every UPDATE and DELETE of its rows.
 */
export const auditLog = pgTable(
  'audit_log',
  {
    id: bigint('id', { mode: 'number' }).primaryKey().generatedAlwaysAsIdentity(),
    at: timestamp('at', { withTimezone: true, precision: 6, mode: 'date' }).notNull().defaultNow(),
    actorKind: text('actor_kind').notNull(),
    actor: text('actor').notNull(),
    action: text('action').notNull(),
    dagId: text('dag_id'),
    target: text('target'),
    details: jsonb('details').$type<Record<string, unknown>>().notNull().default({}),
    source: text('source').notNull(),
    userAgent: text('user_agent'),
  },
  // The console filters by DAG (its page) and by actor, newest first.
  (t) => [index('audit_log_dag_idx').on(t.dagId, t.id), index('audit_log_actor_idx').on(t.actor, t.id)],
);
