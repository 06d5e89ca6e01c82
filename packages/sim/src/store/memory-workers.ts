import { DEFAULT_POOL, type WorkerId, type WorkerRow } from '@fenceline/core';
import { type WorkerBeat } from '@fenceline/core/store';

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

/** A worker's sighting as one heartbeat call gathers it from its beats. */
interface BeatEntry {
  /** The worker's row (the one its latest registration wrote). */
  row: WorkerRow;
  stamp: number;
  seenMs: number;
  polling: boolean;
}

/** The memory store's worker rows: registration, heartbeats and who was seen lately. */
export class MemoryWorkers {
  private readonly rows = new Map<string, WorkerRow>();
  /** Each worker's current session, as workers.session in SQL. */
  private readonly sessions = new Map<string, string>();
  /** Per registered worker, what the heartbeat call stamped `stamp` has gathered of it. */
  private readonly beatEntries = new Map<string, BeatEntry>();
  private beatStamp = 0;

  register(worker: NewWorker, now: Date): WorkerRow {
    const before = this.rows.get(worker.id);
    // The same session registering with another node is not a restart.
    const startedAt = before && this.sessions.get(worker.id) === worker.session ? before.startedAt : now;
    const row: WorkerRow = { id: worker.id, slots: worker.slots, nodeId: worker.nodeId, meta: { ...(worker.meta ?? {}) }, startedAt, lastSeen: now };
    this.rows.set(worker.id, row);
    const entry = this.beatEntries.get(worker.id);
    if (entry) entry.row = row;
    else this.beatEntries.set(worker.id, { row, stamp: 0, seenMs: 0, polling: false });
    this.sessions.set(worker.id, worker.session);
    return { ...row };
  }

  /**
   * The slots of the workers of `pool` seen at or after `cutoffMs`, or counted whatever
   * their last_seen (`members`: lease holders and the workers a check lists as waiting, see
   * reservePoolWorkers), the lending reserve's pool (a worker without an offer serves the
   * default pool).
   */
  liveSlots(pool: string, cutoffMs: number, members: ReadonlySet<string>): number {
    let n = 0;
    for (const w of this.rows.values()) {
      const offered = (w.meta.offer as { pool?: unknown } | undefined)?.pool;
      if ((w.lastSeen.getTime() >= cutoffMs || members.has(w.id)) && (typeof offered === 'string' ? offered : DEFAULT_POOL) === pool) n += w.slots;
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

  /**
   * Marks each worker seen when the node last heard from it (`nowMs` less its silence),
   * never moving a row back; a polling worker (silent 0) seen within `skipSeenWithinMs` is
   * left alone, as the SQL store's heartbeat does.
   */
  heartbeat(beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs: number, nowMs: number): void {
    // A node beats for all its live workers every interval (10,000 of them at full size),
    // so the beats are folded per worker on the row's own entry, stamped with this call,
    // rather than in a map built for the call: one lookup per beat instead of three and an
    // object each. A worker named twice is still decided once, on its latest sighting.
    const stamp = ++this.beatStamp;
    const named: BeatEntry[] = [];
    for (const b of beats) {
      const entry = this.beatEntries.get(b.workerId);
      if (!entry) continue;
      const silentMs = Math.max(0, b.silentMs);
      if (entry.stamp !== stamp) {
        entry.stamp = stamp;
        entry.seenMs = nowMs - silentMs;
        entry.polling = silentMs === 0;
        named.push(entry);
      } else {
        entry.seenMs = Math.max(entry.seenMs, nowMs - silentMs);
        entry.polling = entry.polling || silentMs === 0;
      }
    }
    for (const entry of named) {
      const row = entry.row;
      const stored = row.lastSeen.getTime();
      if (stored >= entry.seenMs) continue;
      if (entry.polling && skipSeenWithinMs > 0 && stored >= entry.seenMs - skipSeenWithinMs) continue;
      row.lastSeen = new Date(entry.seenMs);
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
