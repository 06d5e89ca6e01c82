import { sql } from 'drizzle-orm';
import { date, dateOrNull, num, query, strOrNull, type ConsoleDb } from './sql';

export interface WorkerLease {
  jobId: string;
  runId: string;
  dagId: string;
  taskId: string;
  fence: number;
  attempt: number;
  leasedAt: Date | null;
  leaseExpiresAt: Date | null;
}

export interface WorkerView {
  id: string;
  slots: number;
  nodeId: string | null;
  startedAt: Date;
  lastSeen: Date;
  live: boolean;
  leases: WorkerLease[];
}

export interface RevokedLease {
  at: Date;
  type: string;
  workerId: string | null;
  jobId: string | null;
  runId: string | null;
  dagId: string | null;
  fence: number | null;
  reason: string | null;
}

export interface WorkersSnapshot {
  now: Date;
  workers: WorkerView[];
  /** Leases taken from a worker (expired and swept) and writes refused for a stale fence, last hour. */
  revoked: RevokedLease[];
}

/**
 * Workers seen within `recentMs` (live ones within `liveWindowMs`), each with the jobs it
 * holds now (the leased-jobs partial index), and the last hour's revocations from the log.
 */
export async function workersSnapshot(db: ConsoleDb, opts: { liveWindowMs: number; recentMs: number }): Promise<WorkersSnapshot> {
  const [nowRow] = await query(db, sql`select now() as now`);
  const workerRows = await query(
    db,
    sql`select id, slots, node_id, started_at, last_seen,
          last_seen >= now() - ${opts.liveWindowMs}::float8 * interval '1 millisecond' as live
        from workers where last_seen >= now() - ${opts.recentMs}::float8 * interval '1 millisecond'
        order by id limit 2000`,
  );
  const leaseRows = await query(
    db,
    sql`select id, run_id, dag_id, task_id, fence, attempt, holder, leased_at, lease_expires_at
        from jobs where state = 'leased' order by leased_at limit 20000`,
  );
  const byHolder = new Map<string, WorkerLease[]>();
  for (const r of leaseRows) {
    const list = byHolder.get(String(r.holder)) ?? [];
    list.push({
      jobId: String(r.id),
      runId: String(r.run_id),
      dagId: String(r.dag_id),
      taskId: String(r.task_id),
      fence: num(r.fence),
      attempt: num(r.attempt),
      leasedAt: dateOrNull(r.leased_at),
      leaseExpiresAt: dateOrNull(r.lease_expires_at),
    });
    byHolder.set(String(r.holder), list);
  }
  const revokedRows = await query(
    db,
    sql`select at, type, worker_id, job_id, run_id, dag_id, fence, data->>'reason' as reason
        from events where type in ('lease:expired', 'write:fenced') and at > now() - interval '1 hour'
        order by id desc limit 200`,
  );
  return {
    now: date(nowRow?.now),
    workers: workerRows.map((r) => ({
      id: String(r.id),
      slots: num(r.slots),
      nodeId: strOrNull(r.node_id),
      startedAt: date(r.started_at),
      lastSeen: date(r.last_seen),
      live: r.live === true,
      leases: byHolder.get(String(r.id)) ?? [],
    })),
    revoked: revokedRows.map((r) => ({
      at: date(r.at),
      type: String(r.type),
      workerId: strOrNull(r.worker_id),
      jobId: strOrNull(r.job_id),
      runId: strOrNull(r.run_id),
      dagId: strOrNull(r.dag_id),
      fence: r.fence === null ? null : num(r.fence),
      reason: strOrNull(r.reason),
    })),
  };
}
