import {
  assembleRunPage,
  checkLogChunksQuery,
  LOG_CHUNKS_DEFAULT_LIMIT,
  checkRunFilters,
  decodeRunCursor,
  NotFoundError,
  runKeyMicros,
  runKeyTime,
  runPageLimit,
  type JobRow,
  type ResultRow,
  type RunRow,
} from '@fenceline/core';
import { type AttemptRow, type LogChunkRow, type LogChunksQuery, type ListRunsQuery, type RunPage, type RunPageQuery, type RunReadStore } from '@fenceline/core/store';
import { isId, runRowOf, type MemJob } from './memory-rows';
import type { MemoryTables } from './memory-tables';

/** The reads of runs, jobs and results that the console and the tools make (RunReadStore). */
export class MemoryReads implements Omit<RunReadStore, 'now'> {
  constructor(private readonly tables: MemoryTables) {}

  async getRun(runId: string): Promise<RunRow> {
    const run = this.tables.runs.get(runId);
    if (!run) throw new NotFoundError(`run ${runId} does not exist`, { runId });
    return runRowOf(run);
  }

  async listRuns(query: ListRunsQuery): Promise<RunRow[]> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
    const before = query.beforeId !== undefined && isId(query.beforeId) ? Number(query.beforeId) : Number.POSITIVE_INFINITY;
    const out: RunRow[] = [];
    // Runs are inserted in id order, so walking the map backwards is newest first.
    const all = [...this.tables.runs.values()];
    for (let i = all.length - 1; i >= 0 && out.length < limit; i--) {
      const r = all[i]!;
      if (r.num >= before) continue;
      if (query.dagId !== undefined && r.dagId !== query.dagId) continue;
      if (query.state !== undefined && r.state !== query.state) continue;
      out.push(runRowOf(r));
    }
    return out;
  }

  /**
   * Keyset pages as the SQL store gives them. The memory store holds the simulator's runs,
   * not millions, so it filters and sorts them all for each page rather than keeping an index.
   */
  async pageRuns(query: RunPageQuery): Promise<RunPage> {
    checkRunFilters(query);
    const limit = runPageLimit(query);
    const order = query.order ?? 'newest';
    const cursor = query.cursor === undefined ? null : decodeRunCursor(query.cursor, order);
    const descending = (order === 'newest') !== (cursor?.way === 'before');
    const from = query.scheduledFrom?.getTime() ?? Number.NEGATIVE_INFINITY;
    const before = query.scheduledBefore?.getTime() ?? Number.POSITIVE_INFINITY;
    const at = cursor ? runKeyMicros(cursor.key.scheduledAt) : 0;
    const id = cursor ? Number(cursor.key.id) : 0;
    // Negative when run a comes before b in the order (scheduled_at, id) as read.
    const compare = (aMicros: number, aNum: number, bMicros: number, bNum: number) => (aMicros - bMicros || aNum - bNum) * (descending ? -1 : 1);
    const matched = [...this.tables.runs.values()].filter(
      (r) =>
        (query.dagId === undefined || r.dagId === query.dagId) &&
        (query.state === undefined || r.state === query.state) &&
        (query.trigger === undefined || r.trigger === query.trigger) &&
        r.scheduledAtMs >= from &&
        r.scheduledAtMs < before &&
        (cursor === null || compare(r.scheduledAtMs * 1000, r.num, at, id) > 0),
    );
    matched.sort((a, b) => compare(a.scheduledAtMs * 1000, a.num, b.scheduledAtMs * 1000, b.num));
    return assembleRunPage({
      order,
      cursor,
      limit,
      fetched: matched.slice(0, limit + 1).map((r) => {
        const row = runRowOf(r);
        return { row, key: { scheduledAt: runKeyTime(row.scheduledAt), id: row.id } };
      }),
    });
  }

  async listJobs(runId: string): Promise<JobRow[]> {
    const run = this.tables.runs.get(runId);
    if (!run) return [];
    return run.jobIds.map((id) => this.tables.jobRow(this.tables.jobs.get(id)!));
  }

  async getJob(jobId: string): Promise<JobRow> {
    const job = this.tables.jobs.get(jobId);
    if (!job) throw new NotFoundError(`job ${jobId} does not exist`, { jobId });
    return this.tables.jobRow(job);
  }

  async getResult(jobId: string): Promise<ResultRow | null> {
    const row = this.tables.results.get(jobId);
    return row ? { ...row } : null;
  }

  async listRunResults(runId: string): Promise<ResultRow[]> {
    const run = this.tables.runs.get(runId);
    if (!run) return [];
    const out: ResultRow[] = [];
    for (const id of run.jobIds) {
      const row = this.tables.results.get(id);
      if (row) out.push({ ...row });
    }
    return out;
  }

  async listAttempts(jobId: string): Promise<AttemptRow[]> {
    return (this.tables.attempts.get(jobId) ?? []).map((a) => ({ ...a }));
  }

  async listLogChunks(query: LogChunksQuery): Promise<LogChunkRow[]> {
    checkLogChunksQuery(query);
    const chunks = this.tables.logChunks.get(`${query.jobId}:${query.fence}`) ?? [];
    return chunks
      .filter((c) => c.seq > (query.afterSeq ?? 0))
      .slice(0, query.limit ?? LOG_CHUNKS_DEFAULT_LIMIT)
      .map((c) => ({ ...c }));
  }

  async listLeasedJobs(workerId?: string): Promise<JobRow[]> {
    const out: MemJob[] = [];
    for (const id of this.tables.leased) {
      const job = this.tables.jobs.get(id)!;
      if (job.state === 'leased' && (workerId === undefined || job.holder === workerId)) out.push(job);
    }
    return out.sort((a, b) => a.num - b.num).map((j) => this.tables.jobRow(j));
  }
}
