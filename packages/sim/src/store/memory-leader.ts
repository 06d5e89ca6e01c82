import {
  checkJobsPerRead,
  checkJobsPerRun,
  checkSkippedSlots,
  isTerminalJobState,
  DeposedLeaderError,
  type DagSpec,
  type DagVersionRow,
  type JobId,
  type JobRow,
  type JobState,
  type RunId,
  type RunRow,
} from '@fenceline/core';
import {
  type CreatedRun,
  type DueDag,
  type DuePageKey,
  type DueReadOptions,
  type LeaderGroup,
  type LeaderToken,
  type NewJob,
  type ScheduledRunsItem,
  type ShardSnapshot,
} from '@fenceline/core/store';
import { date, jobIdOf, runRowOf, compareIds, type MemDag, type MemJob, type MemRun } from './memory-rows';
import type { MemoryTables } from './memory-tables';

/** Whether a DAG sorts after a page key in the due order, (next_run_at, id). */
const pastKey = (dag: { nextRunAtMs: number | null; id: string }, key: DuePageKey): boolean =>
  dag.nextRunAtMs! > key.nextRunAt.getTime() || (dag.nextRunAtMs === key.nextRunAt.getTime() && compareIds(dag.id, key.id) > 0);

/**
 * What a shard leader reads and writes, in memory (LeaderStore, but for the leases, which
 * are in memory-leases.ts): due DAGs, the shard's snapshot, run creation, starts, job
 * promotions and run finishes. Every write checks the token first and writes nothing for
 * a leader that no longer leads.
 */
export class MemoryLeader {
  constructor(private readonly tables: MemoryTables) {}

  async dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options: DueReadOptions = {}): Promise<{ now: Date; dags: DueDag[] }> {
    const now = this.tables.nowMs();
    const until = now + Math.max(0, Math.floor(options.horizonMs ?? 0));
    const skip = new Set(checkSkippedSlots(options.skipSlots ?? []).map((d) => d.getTime()));
    const max = Math.max(0, Math.floor(limit));
    const found: MemDag[] = [];
    const seen = new Set<string>();
    for (const token of tokens) {
      if (!this.tables.rules.leads(token, now)) continue;
      const heap = this.tables.dueIndex.get(token.shard);
      if (!heap) continue;
      this.tables.pruneDue(heap);
      heap.walkWhile((e) => {
        if (e.atMs > until) return false;
        const dag = this.tables.dags.get(e.id);
        if (dag && !dag.paused && dag.nextRunAtMs === e.atMs && dag.shard === token.shard && !skip.has(e.atMs) && !seen.has(dag.id) && (!after || pastKey(dag, after))) {
          seen.add(dag.id);
          found.push(dag);
        }
        return true;
      });
    }
    found.sort((a, b) => a.nextRunAtMs! - b.nextRunAtMs! || compareIds(a.id, b.id));
    return {
      now: date(now),
      dags: found.slice(0, max).map((d) => ({ id: d.id, shard: d.shard, version: d.version, spec: this.tables.specOf(d), nextRunAt: date(d.nextRunAtMs!) })),
    };
  }

  async loadShard(token: LeaderToken): Promise<ShardSnapshot> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'loadShard');
    const active = [...(this.tables.activeRunsByShard.get(token.shard) ?? [])].map((id) => this.tables.runs.get(id)!).sort((a, b) => a.num - b.num);
    const jobs: JobRow[] = [];
    const versions = new Map<string, DagSpec>();
    for (const run of active) {
      for (const id of run.jobIds) jobs.push(this.tables.jobRow(this.tables.jobs.get(id)!));
      const key = `${run.dagId}@${run.dagVersion}`;
      if (!versions.has(key)) {
        const v = this.tables.versions.get(run.dagId)?.find((x) => x.version === run.dagVersion);
        if (v) versions.set(key, v.spec);
      }
    }
    jobs.sort((a, b) => Number(a.id) - Number(b.id));
    return { runs: active.map((r) => runRowOf(r)), jobs, versions, now: date(now) };
  }

  async queuedRuns(token: LeaderToken): Promise<RunRow[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'queuedRuns');
    return [...(this.tables.activeRunsByShard.get(token.shard) ?? [])]
      .map((id) => this.tables.runs.get(id)!)
      .filter((r) => r.state === 'queued')
      .sort((a, b) => a.num - b.num)
      .map((r) => runRowOf(r));
  }

  async getDagVersions(keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]> {
    const out: DagVersionRow[] = [];
    for (const k of keys) {
      const row = this.tables.versions.get(k.dagId)?.find((v) => v.version === k.version);
      if (row) out.push({ ...row });
    }
    return out;
  }

  async getJobs(jobIds: JobId[]): Promise<JobRow[]> {
    checkJobsPerRead(jobIds);
    const found = new Set<string>();
    for (const id of jobIds) if (this.tables.jobs.has(id)) found.add(id);
    // Job ids are decimal integers: shorter is smaller, as the SQL store orders them.
    return [...found].sort((a, b) => a.length - b.length || compareIds(a, b)).map((id) => this.tables.jobRow(this.tables.jobs.get(id)!));
  }

  // The multi-leader forms run each group through its single-token step, in order, in
  // one synchronous pass, so they are as atomic as one SQL statement. As in one statement,
  // an item named twice anywhere in the call counts for its first occurrence only.
  async createScheduledRunsAcross(groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]> {
    // Refused before any group writes, as the one SQL statement is.
    checkJobsPerRun(groups.flatMap((g) => g.items.flatMap((i) => (i.start ? [{ dagId: i.dagId, jobs: i.start.jobs }] : []))));
    return this.acrossPerItem(
      groups,
      (i) => i.dagId,
      [] as CreatedRun[],
      (token, items) => this.createRunsIn(token, items),
    );
  }

  async startRunsAcross(groups: LeaderGroup<{ runId: RunId; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]> {
    // Refused before any group starts, as the one SQL statement is.
    checkJobsPerRun(groups.flatMap((g) => g.items));
    return this.acrossPerItem(
      groups,
      (i) => i.runId,
      [] as JobRow[],
      (token, items) => this.startRunsIn(token, items),
    );
  }

  async finishRunsAcross(groups: LeaderGroup<{ runId: RunId; state: 'succeeded' | 'failed' | 'cancelled' }>[]): Promise<(boolean[] | DeposedLeaderError)[]> {
    return this.acrossPerItem(
      groups,
      (i) => i.runId,
      false,
      (token, items) => this.finishRunsIn(token, items),
    );
  }

  promoteJobsAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.moveJobsAcross(groups, 'promoteJobs', ['waiting'], 'ready');
  }

  markUpstreamFailedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.moveJobsAcross(groups, 'markUpstreamFailed', ['waiting', 'ready'], 'upstream_failed');
  }

  markSkippedAcross(groups: LeaderGroup<JobId>[]): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.moveJobsAcross(groups, 'markSkipped', ['waiting'], 'skipped');
  }

  /** Moves the jobs of each group from one of `from` to `to`, under each group's own token. */
  private moveJobsAcross(groups: LeaderGroup<JobId>[], operation: string, from: JobState[], to: JobState): Promise<(JobId[] | DeposedLeaderError)[]> {
    return this.across(
      firstOccurrences(groups, (id) => id),
      async (token, items) =>
        this.moveJobs(
          token,
          items.map((x) => x.item),
          operation,
          from,
          to,
        ),
    );
  }

  /** One leader's run creations (see createScheduledRunsAcross). */
  private async createRunsIn(token: LeaderToken, items: ScheduledRunsItem[]): Promise<CreatedRun[][]> {
    checkJobsPerRun(items.flatMap((i) => (i.start ? [{ dagId: i.dagId, jobs: i.start.jobs }] : [])));
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'createScheduledRuns');
    const seen = new Set<string>();
    return items.map(({ dagId, expectedNextRunAt, slots, nextRunAt, start, params }) => {
      // A DAG named twice is written for its first item only, as in one SQL statement.
      if (seen.has(dagId)) return [];
      seen.add(dagId);
      const dag = this.tables.dags.get(dagId);
      if (!dag || dag.shard !== token.shard || dag.paused || dag.nextRunAtMs !== expectedNextRunAt.getTime() || dag.nextRunAtMs > now) return [];
      dag.nextRunAtMs = nextRunAt === null ? null : nextRunAt.getTime();
      this.tables.indexDue(dag);
      this.tables.emit({ op: 'dag:next-run', atMs: now, dagId, token, nextRunAtMs: dag.nextRunAtMs });
      const created: MemRun[] = [];
      for (const slot of slots) {
        const at = slot.getTime();
        if (this.tables.rules.slotTaken(dagId, at)) continue;
        created.push(this.tables.insertRun(dag, at, 'schedule', token, null, params));
      }
      // A single-slot item may start its run in the same write, if the DAG is still at the
      // version the leader planned with (as in the SQL statement).
      const startWith = start && slots.length === 1 && dag.version === start.version ? start.jobs : null;
      return created
        .sort((a, b) => a.scheduledAtMs - b.scheduledAtMs)
        .map((r): CreatedRun => {
          if (!startWith) return runRowOf(r);
          const jobs = this.startOne(token, r.id, startWith, now);
          return { ...runRowOf(r), jobs };
        });
    });
  }

  /** One leader's run starts (see startRunsAcross). */
  private async startRunsIn(token: LeaderToken, items: { runId: string; jobs: NewJob[] }[]): Promise<JobRow[][]> {
    checkJobsPerRun(items);
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'startRun');
    // A run named twice starts once: its second item finds it running already.
    return items.map(({ runId, jobs }) => this.startOne(token, runId, jobs, now));
  }

  private startOne(token: LeaderToken, runId: string, newJobs: NewJob[], now: number): JobRow[] {
    const run = this.tables.runs.get(runId);
    if (!run || run.shard !== token.shard || run.state !== 'queued') return [];
    run.state = 'running';
    run.startedAtMs = now;
    const rows: JobRow[] = [];
    for (const j of newJobs) {
      const num = this.tables.nextJobNum++;
      const job: MemJob = {
        num,
        id: jobIdOf(num),
        runId: run.id,
        dagId: run.dagId,
        shard: run.shard,
        taskId: j.taskId,
        state: j.state,
        attempt: 0,
        maxAttempts: j.maxAttempts,
        fence: 0,
        holder: null,
        holderSession: null,
        leaseExpiresAtMs: null,
        nextAttemptAtMs: null,
        priority: j.priority,
        retryBackoffMs: j.retryBackoffMs,
        retryBackoffMaxMs: j.retryBackoffMaxMs,
        timeoutMs: j.timeoutMs,
        readyAtMs: j.state === 'ready' ? now : null,
        leasedAtMs: null,
        renewed: false,
        lostLeases: 0,
        endedAtMs: null,
        lastError: null,
        resources: j.resources ?? null,
      };
      this.tables.jobs.set(job.id, job);
      run.jobIds.push(job.id);
      rows.push(this.tables.jobRow(job));
    }
    this.tables.emit({ op: 'run:started', atMs: now, runId, dagId: run.dagId, token, jobIds: [...run.jobIds] });
    return rows;
  }

  /** One leader's run finishes (see finishRunsAcross). */
  private async finishRunsIn(token: LeaderToken, items: { runId: string; state: 'succeeded' | 'failed' | 'cancelled' }[]): Promise<boolean[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'finishRun');
    return items.map(({ runId, state }) => {
      const run = this.tables.runs.get(runId);
      if (!run || run.shard !== token.shard) return false;
      if (run.state !== 'running' && !(run.state === 'queued' && state === 'failed')) return false;
      // A run with a job still open does not end: an operator's clear may have reopened it
      // while the finish was on its way.
      for (const jobId of run.jobIds) if (!isTerminalJobState(this.tables.jobs.get(jobId)?.state ?? 'succeeded')) return false;
      run.state = state;
      run.endedAtMs = now;
      this.tables.activeRunsByShard.get(run.shard)?.delete(run.id);
      this.tables.emit({ op: 'run:finished', atMs: now, runId, dagId: run.dagId, token, state });
      return true;
    });
  }

  private moveJobs(token: LeaderToken, jobIds: JobId[], operation: string, from: JobState[], to: JobState): JobId[] {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, operation);
    const moved: JobId[] = [];
    for (const id of new Set(jobIds)) {
      const job = this.tables.jobs.get(id);
      if (!job || job.shard !== token.shard || !from.includes(job.state)) continue;
      job.state = to;
      if (to === 'ready') job.readyAtMs = now;
      else job.endedAtMs = now;
      moved.push(id);
      this.tables.emit({ op: to === 'ready' ? 'job:promoted' : to === 'skipped' ? 'job:skipped' : 'job:upstream_failed', atMs: now, jobId: id, token });
    }
    return moved;
  }

  /** A multi-leader form whose result has one entry per item; a repeated item gets `repeat`. */
  private acrossPerItem<T, R>(groups: LeaderGroup<T>[], key: (item: T) => string, repeat: R, one: (token: LeaderToken, items: T[]) => Promise<R[]>) {
    return this.across(firstOccurrences(groups, key), async (token, fresh, all) => {
      const results = await one(
        token,
        fresh.map((f) => f.item),
      );
      const out: R[] = all.map(() => repeat);
      fresh.forEach((f, k) => (out[f.index] = results[k]!));
      return out;
    });
  }

  private async across<T, R>(
    groups: { token: LeaderToken; fresh: { item: T; index: number }[]; all: T[] }[],
    one: (token: LeaderToken, fresh: { item: T; index: number }[], all: T[]) => Promise<R>,
  ): Promise<(R | DeposedLeaderError)[]> {
    const out: (R | DeposedLeaderError)[] = [];
    for (const { token, fresh, all } of groups) {
      try {
        out.push(await one(token, fresh, all));
      } catch (err) {
        if (err instanceof DeposedLeaderError) out.push(err);
        else throw err;
      }
    }
    return out;
  }
}

/** Each group's items that no earlier item of the call named, with their index in the group. */
function firstOccurrences<T>(groups: LeaderGroup<T>[], key: (item: T) => string) {
  const seen = new Set<string>();
  return groups.map(({ token, items }) => ({
    token,
    all: items,
    fresh: items.flatMap((item, index) => {
      const k = key(item);
      if (seen.has(k)) return [];
      seen.add(k);
      return [{ item, index }];
    }),
  }));
}
