import { sql } from 'drizzle-orm';
import type { DagId, JobId, RunId, WorkerId, WorkerOffer } from '@fenceline/core';
import { offerOfMeta } from './routing';
import { dagIdOf, dagIdOrNull, date, dateOrNull, jobIdOf, jobIdOrNull, num, query, runIdOf, runIdOrNull, strOrNull, workerIdOf, workerIdOrNull, type ConsoleDb } from './sql';

export interface WorkerLease {
  jobId: JobId;
  runId: RunId;
  dagId: DagId;
  taskId: string;
  fence: number;
  attempt: number;
  leasedAt: Date | null;
  leaseExpiresAt: Date | null;
}

export interface WorkerView {
  id: WorkerId;
  slots: number;
  nodeId: string | null;
  startedAt: Date;
  lastSeen: Date;
  live: boolean;
  /** Its pool, labels and job types, as it said when it registered (the defaults for an older worker). */
  offer: WorkerOffer;
  /** False when the worker sent no offer (an older worker), so the console can say its pool is assumed. */
  offerReported: boolean;
  leases: WorkerLease[];
}

export interface RevokedLease {
  at: Date;
  type: string;
  workerId: WorkerId | null;
  jobId: JobId | null;
  runId: RunId | null;
  dagId: DagId | null;
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
    sql`select id, slots, node_id, started_at, last_seen, meta,
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
      jobId: jobIdOf(r.id),
      runId: runIdOf(r.run_id),
      dagId: dagIdOf(r.dag_id),
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
    workers: workerRows.map((r) => {
      const { offer, reported } = offerOfMeta(r.meta);
      return {
        id: workerIdOf(r.id),
        slots: num(r.slots),
        nodeId: strOrNull(r.node_id),
        startedAt: date(r.started_at),
        lastSeen: date(r.last_seen),
        live: r.live === true,
        offer,
        offerReported: reported,
        leases: byHolder.get(String(r.id)) ?? [],
      };
    }),
    revoked: revokedRows.map((r) => ({
      at: date(r.at),
      type: String(r.type),
      workerId: workerIdOrNull(r.worker_id),
      jobId: jobIdOrNull(r.job_id),
      runId: runIdOrNull(r.run_id),
      dagId: dagIdOrNull(r.dag_id),
      fence: r.fence === null ? null : num(r.fence),
      reason: strOrNull(r.reason),
    })),
  };
}
