import { NotFoundError, type JobRow, type ListRunsQuery, type ResultRow, type RunReadStore, type RunRow } from '@fenceline/core';
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

  async listLeasedJobs(workerId?: string): Promise<JobRow[]> {
    const out: MemJob[] = [];
    for (const id of this.tables.leased) {
      const job = this.tables.jobs.get(id)!;
      if (job.state === 'leased' && (workerId === undefined || job.holder === workerId)) out.push(job);
    }
    return out.sort((a, b) => a.num - b.num).map((j) => this.tables.jobRow(j));
  }
}
