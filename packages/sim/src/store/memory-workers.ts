import { DEFAULT_POOL, type WorkerId, type WorkerRow } from '@fenceline/core';

/** A worker as it registers. */
export interface NewWorker {
  id: WorkerId;
  slots: number;
  nodeId: string | null;
  meta?: Record<string, unknown>;
  /** The session key that becomes the worker's current one. */
  session: string;
  credentialId: string | null;
}

/** The memory store's worker rows: registration, heartbeats and who was seen lately. */
export class MemoryWorkers {
  private readonly rows = new Map<string, WorkerRow>();
  /** Each worker's current session, as workers.session in SQL. */
  private readonly sessions = new Map<string, string>();

  register(worker: NewWorker, now: Date): WorkerRow {
    const before = this.rows.get(worker.id);
    // The same session registering with another node is not a restart.
    const startedAt = before && this.sessions.get(worker.id) === worker.session ? before.startedAt : now;
    const row: WorkerRow = { id: worker.id, slots: worker.slots, nodeId: worker.nodeId, meta: { ...(worker.meta ?? {}) }, startedAt, lastSeen: now };
    this.rows.set(worker.id, row);
    this.sessions.set(worker.id, worker.session);
    return { ...row };
  }

  /** The slots of the workers of `pool` seen at or after `cutoffMs` (a worker without an offer serves the default pool). */
  liveSlots(pool: string, cutoffMs: number): number {
    let n = 0;
    for (const w of this.rows.values()) {
      const offered = (w.meta.offer as { pool?: unknown } | undefined)?.pool;
      if (w.lastSeen.getTime() >= cutoffMs && (typeof offered === 'string' ? offered : DEFAULT_POOL) === pool) n += w.slots;
    }
    return n;
  }

  /** A registered worker's slots; undefined for one that never registered. */
  slots(workerId: string): number | undefined {
    return this.rows.get(workerId)?.slots;
  }

  session(workerId: string): string | null {
    return this.sessions.get(workerId) ?? null;
  }

  /** Marks these workers seen now, leaving alone any seen within `skipSeenWithinMs` (as the SQL store's heartbeat does). */
  heartbeat(workerIds: string[], nodeId: string | null, skipSeenWithinMs: number, now: Date): void {
    for (const id of workerIds) {
      const row = this.rows.get(id);
      if (!row) continue;
      if (skipSeenWithinMs > 0 && row.lastSeen.getTime() >= now.getTime() - skipSeenWithinMs) continue;
      row.lastSeen = now;
      if (nodeId !== null) row.nodeId = nodeId;
    }
  }

  /** Workers last seen at or after `cutoffMs`, by id. */
  list(cutoffMs: number): WorkerRow[] {
    return [...this.rows.values()]
      .filter((w) => w.lastSeen.getTime() >= cutoffMs)
      .sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
      .map((w) => ({ ...w }));
  }
}
