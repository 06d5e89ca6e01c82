import { NotFoundError } from '@fenceline/core';
import { type WorkerCredentialRow } from '@fenceline/core/store';
import { date } from './memory-rows';
import type { MemoryTables } from './memory-tables';

interface MemCredential {
  row: WorkerCredentialRow;
  secretHash: string;
}

/** Worker credentials in memory (WorkerCredentialStore), kept as the SQL store keeps them. */
export class MemoryCredentials {
  private readonly byId = new Map<string, MemCredential>();

  constructor(private readonly tables: MemoryTables) {}

  async createWorkerCredential(input: { id: string; pool: string; secretHash: string }): Promise<WorkerCredentialRow> {
    // The SQL store's primary key and unique index refuse the same two things.
    if (this.byId.has(input.id) || [...this.byId.values()].some((c) => c.secretHash === input.secretHash)) {
      throw new Error(`worker credential ${input.id} or its secret exists already`);
    }
    const row: WorkerCredentialRow = { id: input.id, pool: input.pool, createdAt: date(this.tables.nowMs()), revokedAt: null, lastUsedAt: null };
    this.byId.set(input.id, { row, secretHash: input.secretHash });
    return { ...row };
  }

  async listWorkerCredentials(): Promise<WorkerCredentialRow[]> {
    return [...this.byId.values()].map((c) => ({ ...c.row })).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Revoking twice keeps the first time; the notice goes out as the SQL store's does. */
  async revokeWorkerCredential(input: { id: string }): Promise<WorkerCredentialRow> {
    const found = this.byId.get(input.id);
    if (!found) throw new NotFoundError(`worker credential ${input.id} does not exist`, { credentialId: input.id });
    found.row.revokedAt ??= date(this.tables.nowMs());
    this.tables.publish({ kind: 'credential-revoked', credentialId: input.id });
    return { ...found.row };
  }

  async findWorkerCredential(input: { secretHash: string }): Promise<WorkerCredentialRow | null> {
    const found = [...this.byId.values()].find((c) => c.secretHash === input.secretHash);
    if (!found) return null;
    found.row.lastUsedAt = date(this.tables.nowMs());
    return { ...found.row };
  }
}
