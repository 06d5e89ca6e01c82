import { isSequenceId } from '@fenceline/core';
import { checkAuditEntry } from '@fenceline/core/store';
import type { AuditQuery, AuditRow, NewAuditEntry } from '@fenceline/core/store';
import { date } from './memory-rows';

/** The audit log in memory: append and read, as the SQL store's table allows. */
export class MemoryAudit {
  private readonly entries: AuditRow[] = [];

  constructor(private readonly nowMs: () => number) {}

  async appendAudit(entry: NewAuditEntry): Promise<AuditRow> {
    const row: AuditRow = { id: String(this.entries.length + 1), at: date(this.nowMs()), ...checkAuditEntry(entry) };
    this.entries.push(row);
    return { ...row, details: { ...row.details } };
  }

  async listAudit(query: AuditQuery): Promise<AuditRow[]> {
    if (query.beforeId !== undefined && !isSequenceId(query.beforeId)) return [];
    const before = query.beforeId === undefined ? Number.POSITIVE_INFINITY : Number(query.beforeId);
    const limit = Math.min(Math.max(query.limit ?? 100, 1), 500);
    const found: AuditRow[] = [];
    for (let i = this.entries.length - 1; i >= 0 && found.length < limit; i--) {
      const e = this.entries[i]!;
      if (Number(e.id) >= before) continue;
      if (query.actor !== undefined && e.actor !== query.actor) continue;
      if (query.action !== undefined && e.action !== query.action) continue;
      if (query.dagId !== undefined && e.dagId !== query.dagId) continue;
      found.push({ ...e, details: { ...e.details } });
    }
    return found;
  }
}
