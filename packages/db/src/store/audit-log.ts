import { sql } from 'drizzle-orm';
import { checkAuditEntry } from '@fenceline/core/store';
import type { AuditAction, AuditActorKind, AuditQuery, AuditRow, NewAuditEntry } from '@fenceline/core/store';
import { firstRow, jsonb, rows, type Executor, type RawRow } from './db';
import { isId, toDate, toId } from './rows';

function auditFromRow(row: RawRow): AuditRow {
  return {
    id: toId(row.id),
    at: toDate(row.at),
    actorKind: row.actor_kind as AuditActorKind,
    actor: row.actor as string,
    action: row.action as AuditAction,
    dagId: (row.dag_id as string | null) ?? null,
    target: (row.target as string | null) ?? null,
    details: (row.details as Record<string, unknown>) ?? {},
    source: row.source as string,
    userAgent: (row.user_agent as string | null) ?? null,
  };
}

/** Appends one entry at store time now; the only write to audit_log anywhere. */
export async function appendAudit(db: Executor, entry: NewAuditEntry): Promise<AuditRow> {
  const e = checkAuditEntry(entry);
  const row = await firstRow(
    db,
    sql`insert into audit_log (actor_kind, actor, action, dag_id, target, details, source, user_agent)
        values (${e.actorKind}, ${e.actor}, ${e.action}, ${e.dagId}, ${e.target}, ${jsonb(e.details)}, ${e.source}, ${e.userAgent})
        returning *`,
  );
  if (!row) throw new Error('appending to the audit log returned no row');
  return auditFromRow(row);
}

export async function listAudit(db: Executor, query: AuditQuery): Promise<AuditRow[]> {
  const q = { limit: Math.min(Math.max(query.limit ?? 100, 1), 500), ...query };
  const where = [sql`true`];
  if (q.actor !== undefined) where.push(sql`actor = ${q.actor}`);
  if (q.action !== undefined) where.push(sql`action = ${q.action}`);
  if (q.dagId !== undefined) where.push(sql`dag_id = ${q.dagId}`);
  if (q.beforeId !== undefined) {
    // An id no entry can have pages back from nothing.
    if (!isId(q.beforeId)) return [];
    where.push(sql`id < ${q.beforeId}::bigint`);
  }
  const found = await rows(db, sql`select * from audit_log where ${sql.join(where, sql` and `)} order by id desc limit ${Math.min(Math.max(q.limit, 1), 500)}`);
  return found.map(auditFromRow);
}
