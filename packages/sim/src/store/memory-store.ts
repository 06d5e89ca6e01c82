import {
  DeposedLeaderError,
  FencelineError,
  ForgedFenceError,
  Heap,
  LIMITS,
  LeaseLostError,
  NotFoundError,
  checkContention,
  checkJobsPerRead,
  checkJobsPerRun,
  checkRequestKey,
  StaleFenceError,
  TooLargeError,
  canonicalJson,
  firstSlot,
  parseDagSpec,
  retryBackoffMs,
  shardOf,
  specsEqual,
  utf8ByteLength,
  type AcquireResult,
  type ContentionView,
  type CompleteItem,
  type DagRow,
  type DagSpec,
  type DagSpecInput,
  type DagVersionRow,
  type DueDag,
  type DuePageKey,
  type DueReadOptions,
  checkSkippedSlots,
  type EventRow,
  type Grant,
  type GrantedLease,
  type JobRow,
  type JobState,
  type LeaderToken,
  type LeaseRef,
  type ListDagsQuery,
  type ListRunsQuery,
  type NewEvent,
  type NewJob,
  type RenewOutcome,
  type ResultRow,
  type RunRow,
  type LeaderGroup,
  type ScheduledRunsItem,
  type CreatedRun,
  type ShardLeaseRow,
  type ShardSnapshot,
  type Store,
  type StoreNotice,
  type SweptJob,
  type TriggerOptions,
  type WorkerRow,
  type WriteOutcome,
} from '@fenceline/core';
import { MemoryEventLog, type EventQuery } from './memory-event-log';
import { date, dagRowOf, dateOrNull, isId, jobRowOf, runRowOf, type MemDag, type MemJob, type MemRun, type MemShard } from './memory-rows';
import type { StoreObserver, StoreWrite } from './records';
import { MemoryWorkers, type NewWorker } from './memory-workers';

export type { MemJob, MemRun } from './memory-rows';

interface IndexEntry {
  atMs: number;
  id: string;
  num: number;
}

export interface MemoryStoreOptions {
  /** The store's own clock in epoch milliseconds (the simulation's true time). */
  nowMs: () => number;
  /** Told of every write that lands, at the instant it lands (the invariant checker). */
  observer?: StoreObserver;
  /** How many event-log rows to keep; the oldest are dropped beyond it (a day of mission load logs millions). */
  eventLogLimit?: number;
}

const byEntry = (a: IndexEntry, b: IndexEntry): boolean => (a.atMs !== b.atMs ? a.atMs < b.atMs : a.num < b.num);
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
/** Whether a DAG sorts after a page key in the due order, (next_run_at, id). */
const pastKey = (dag: { nextRunAtMs: number | null; id: string }, key: DuePageKey): boolean =>
  dag.nextRunAtMs! > key.nextRunAt.getTime() || (dag.nextRunAtMs === key.nextRunAt.getTime() && compareIds(dag.id, key.id) > 0);

/**
 * The Store contract in memory, with the SQL store's semantics and refusals: the same
 * conditional updates, the same typed errors, the same orderings (ids ascending, due DAGs
 * by next_run_at then id, expired leases by expiry then id), all time from the store's
 * own clock. Every method runs its whole effect synchronously when it is called, which
 * makes each one atomic, and returns a promise; the simulator puts a link in front of it
 * (store/link.ts) that carries calls and replies through the virtual timer queue, so
 * latency, slow links and cuts sit between a process and the store, not inside it.
 *
 * The rules that keep "once" true are small protected methods (leads, fenceAccepts,
 * revokedFence, grantable, slotTaken), so a test can subclass the store, break exactly
 * one of them, and show that the invariant checker notices.
 *
 * Indexes: due DAGs per shard and live leases per shard are heaps keyed by time, with
 * stale entries skipped lazily, so a tick over 100,000 DAGs and a sweep over 3,500 leases
 * cost O(due log n), not a scan.
 */
export class MemoryStore implements Store {
  protected readonly nowMs: () => number;
  private observer: StoreObserver | undefined;
  private shardCount: number | null = null;
  private readonly shards = new Map<number, MemShard>();
  /** Scheduler nodes' last presence stamp, store time. */
  private readonly nodesSeen = new Map<string, number>();
  private readonly dags = new Map<string, MemDag>();
  private readonly versions = new Map<string, DagVersionRow[]>();
  private readonly dueIndex = new Map<number, Heap<IndexEntry>>();
  protected readonly runs = new Map<string, MemRun>();
  private readonly runKeys = new Map<string, string>();
  /** The unique index on (dag_id, request_key): a manual trigger's key, to its run id. */
  private readonly requestKeys = new Map<string, string>();
  private readonly activeRunsByShard = new Map<number, Set<string>>();
  protected readonly jobs = new Map<string, MemJob>();
  private readonly leaseIndex = new Map<number, Heap<IndexEntry>>();
  private readonly leased = new Set<string>();
  private readonly results = new Map<string, ResultRow>();
  private readonly workerTable = new MemoryWorkers();
  private readonly eventLog: MemoryEventLog;
  private readonly listeners = new Set<(notice: StoreNotice) => void>();
  private nextRunNum = 1;
  private nextJobNum = 1;

  constructor(options: MemoryStoreOptions) {
    this.nowMs = options.nowMs;
    this.observer = options.observer;
    this.eventLog = new MemoryEventLog(options.eventLogLimit ?? Number.POSITIVE_INFINITY);
  }

  /** Attaches the invariant checker (one observer at a time). */
  observe(observer: StoreObserver | undefined): void {
    this.observer = observer;
  }

  // ---- the rules, overridable one at a time by deliberately broken test stores ----------

  /** The lead check: the token's node holds the shard under that epoch and the lease is live. */
  protected leads(token: LeaderToken, nowMs: number): boolean {
    const row = this.shards.get(token.shard);
    return !!row && row.holder === token.nodeId && row.epoch === token.epoch && row.expiresAtMs !== null && row.expiresAtMs > nowMs;
  }

  /** The fenced-write check: the fence on record, this holder, a live lease. */
  protected fenceAccepts(job: MemJob, ref: LeaseRef, nowMs: number): boolean {
    return job.fence === ref.fence && job.holder === ref.workerId && job.state === 'leased' && job.leaseExpiresAtMs !== null && job.leaseExpiresAtMs > nowMs;
  }

  /** The fence a revocation (sweep or hand-back) leaves on the job. */
  protected revokedFence(fence: number): number {
    return fence + 1;
  }

  /** A job may be leased only when it is ready and its backoff has passed. */
  protected grantable(job: MemJob, nowMs: number): boolean {
    return job.state === 'ready' && (job.nextAttemptAtMs === null || job.nextAttemptAtMs <= nowMs);
  }

  /** The unique index on (dag_id, scheduled_at). */
  protected slotTaken(dagId: string, scheduledAtMs: number): boolean {
    return this.runKeys.has(`${dagId}\u0000${scheduledAtMs}`);
  }

  // ---- read access for the simulator's checker and reports (not part of Store) ----------

  allJobs(): IterableIterator<MemJob> {
    return this.jobs.values();
  }

  allRuns(): IterableIterator<MemRun> {
    return this.runs.values();
  }

  jobById(jobId: string): MemJob | undefined {
    return this.jobs.get(jobId);
  }

  resultOf(jobId: string): ResultRow | undefined {
    return this.results.get(jobId);
  }

  shardRow(shard: number): Readonly<MemShard> | undefined {
    return this.shards.get(shard);
  }

  dagCount(): number {
    return this.dags.size;
  }

  // ---- Store -----------------------------------------------------------------------------

  async now(): Promise<Date> {
    return date(this.nowMs());
  }

  async initCluster(shardCount: number): Promise<{ shardCount: number }> {
    if (this.shardCount === null) {
      if (!Number.isInteger(shardCount) || shardCount < 1) throw new Error(`initCluster: shard count must be a positive integer, got ${shardCount}`);
      this.shardCount = shardCount;
    }
    return { shardCount: this.shardCount };
  }

  async acquireShard(shard: number, nodeId: string, ttlMs: number): Promise<AcquireResult | null> {
    const now = this.nowMs();
    const row = this.shards.get(shard);
    if (!row) {
      const created: MemShard = { shard, holder: nodeId, epoch: 1, expiresAtMs: now + ttlMs, acquiredAtMs: now };
      this.shards.set(shard, created);
      this.emit({ op: 'shard:acquired', atMs: now, shard, nodeId, epoch: 1, expiresAtMs: now + ttlMs });
      return { token: { shard, nodeId, epoch: 1 }, expiresAt: date(now + ttlMs), previousHolder: null, reason: 'new' };
    }
    const live = row.expiresAtMs !== null && row.expiresAtMs > now;
    if (!(row.holder === null || row.holder === nodeId || !live)) return null;
    const prevHolder = row.holder;
    const prevEpoch = row.epoch;
    // Every take raises the epoch, our own live lease included (see the SQL store).
    const reclaiming = row.holder === nodeId && live;
    row.epoch += 1;
    row.acquiredAtMs = now;
    row.holder = nodeId;
    row.expiresAtMs = now + ttlMs;
    const token = { shard, nodeId, epoch: row.epoch };
    const expiresAt = date(now + ttlMs);
    this.emit({ op: 'shard:acquired', atMs: now, shard, nodeId, epoch: row.epoch, expiresAtMs: now + ttlMs });
    if (reclaiming) return { token, expiresAt, previousHolder: null, reason: 'reclaimed' };
    if (prevHolder === null) return { token, expiresAt, previousHolder: null, reason: prevEpoch === 0 ? 'new' : 'released' };
    return { token, expiresAt, previousHolder: prevHolder, reason: 'expired' };
  }

  async renewShard(token: LeaderToken, ttlMs: number): Promise<Date> {
    const now = this.nowMs();
    const row = this.shards.get(token.shard);
    if (!row || !this.leads(token, now)) throw this.deposed(token, 'renewShard');
    row.expiresAtMs = now + ttlMs;
    this.emit({ op: 'shard:renewed', atMs: now, shard: token.shard, nodeId: token.nodeId, epoch: token.epoch, expiresAtMs: now + ttlMs });
    return date(now + ttlMs);
  }

  async releaseShard(token: LeaderToken): Promise<void> {
    const now = this.nowMs();
    const row = this.shards.get(token.shard);
    if (!row || row.holder !== token.nodeId || row.epoch !== token.epoch) return;
    row.holder = null;
    row.expiresAtMs = now;
    this.emit({ op: 'shard:released', atMs: now, shard: token.shard, nodeId: token.nodeId, epoch: token.epoch });
  }

  async contentionView(nodeId: string, liveWindowMs: number, serving: boolean): Promise<ContentionView> {
    checkContention(nodeId, liveWindowMs);
    const now = this.nowMs();
    const last = this.nodesSeen.get(nodeId);
    if (serving && (last === undefined || last < now - Math.floor(liveWindowMs / 10))) this.nodesSeen.set(nodeId, now);
    const nodes = [...this.nodesSeen].filter(([id, seen]) => (id === nodeId ? serving : seen > now - liveWindowMs)).map(([id]) => id);
    return { now: date(now), nodes: nodes.sort(), shards: await this.listShards() };
  }

  async leaveCluster(nodeId: string): Promise<void> {
    this.nodesSeen.delete(nodeId);
  }

  async listShards(): Promise<ShardLeaseRow[]> {
    return [...this.shards.values()]
      .sort((a, b) => a.shard - b.shard)
      .map((s) => ({ shard: s.shard, holder: s.holder, epoch: s.epoch, expiresAt: dateOrNull(s.expiresAtMs), acquiredAt: dateOrNull(s.acquiredAtMs) }));
  }

  // ---- DAGs ----------------------------------------------------------------------------------

  async putDag(input: DagSpecInput, shardCount: number): Promise<{ dagId: string; version: number; created: boolean }> {
    const spec = parseDagSpec(input);
    const now = this.nowMs();
    const head = this.dags.get(spec.id);
    if (!head) {
      const shard = shardOf(spec.id, shardCount);
      const dag: MemDag = { id: spec.id, shard, version: 1, paused: spec.paused, nextRunAtMs: firstSlot(spec.schedule, now), createdAtMs: now, updatedAtMs: now };
      this.dags.set(spec.id, dag);
      this.versions.set(spec.id, [{ dagId: spec.id, version: 1, spec, createdAt: date(now) }]);
      this.indexDue(dag);
      this.emit({ op: 'dag:put', atMs: now, dagId: spec.id, shard, version: 1, nextRunAtMs: dag.nextRunAtMs, paused: dag.paused });
      this.publish({ kind: 'dag-changed', shard, dagId: spec.id });
      return { dagId: spec.id, version: 1, created: true };
    }
    const current = this.specOf(head);
    if (specsEqual(current, spec)) return { dagId: spec.id, version: head.version, created: false };
    const version = head.version + 1;
    this.versions.get(spec.id)!.push({ dagId: spec.id, version, spec, createdAt: date(now) });
    head.version = version;
    head.updatedAtMs = now;
    // An edit that keeps the schedule keeps the next slot, so it neither moves nor skips one.
    if (canonicalJson(current.schedule) !== canonicalJson(spec.schedule)) {
      head.nextRunAtMs = firstSlot(spec.schedule, now);
      this.indexDue(head);
    }
    this.emit({ op: 'dag:put', atMs: now, dagId: spec.id, shard: head.shard, version, nextRunAtMs: head.nextRunAtMs, paused: head.paused });
    this.publish({ kind: 'dag-changed', shard: head.shard, dagId: spec.id });
    return { dagId: spec.id, version, created: true };
  }

  async getDag(dagId: string): Promise<DagRow> {
    const dag = this.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    return dagRowOf(dag, this.specOf(dag));
  }


  async getDagVersions(keys: { dagId: string; version: number }[]): Promise<DagVersionRow[]> {
    const out: DagVersionRow[] = [];
    for (const k of keys) {
      const row = this.versions.get(k.dagId)?.find((v) => v.version === k.version);
      if (row) out.push({ ...row });
    }
    return out;
  }

  async listDagVersions(dagId: string): Promise<DagVersionRow[]> {
    return (this.versions.get(dagId) ?? []).map((v) => ({ ...v }));
  }

  async listDags(query: ListDagsQuery): Promise<{ rows: DagRow[]; total: number }> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
    const offset = Math.max(query.offset ?? 0, 0);
    const desc = query.direction === 'desc';
    const search = query.search?.trim().toLowerCase();
    const all = [...this.dags.values()].filter((d) => !search || d.id.toLowerCase().includes(search));
    const sort = query.sort ?? 'id';
    const byId = (a: MemDag, b: MemDag): number => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
    all.sort((a, b) => {
      if (sort !== 'id') {
        const av = sort === 'nextRunAt' ? a.nextRunAtMs : a.updatedAtMs;
        const bv = sort === 'nextRunAt' ? b.nextRunAtMs : b.updatedAtMs;
        // NULLS LAST in either direction, as the SQL store orders them.
        if (av === null && bv !== null) return 1;
        if (bv === null && av !== null) return -1;
        if (av !== null && bv !== null && av !== bv) return desc ? bv - av : av - bv;
      }
      return desc ? byId(b, a) : byId(a, b);
    });
    return { rows: all.slice(offset, offset + limit).map((d) => dagRowOf(d, this.specOf(d))), total: all.length };
  }

  async setPaused(dagId: string, paused: boolean): Promise<DagRow> {
    const dag = this.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    const now = this.nowMs();
    dag.paused = paused;
    dag.updatedAtMs = now;
    this.indexDue(dag);
    this.emit({ op: 'dag:paused', atMs: now, dagId, paused });
    this.publish({ kind: 'dag-changed', shard: dag.shard, dagId });
    return dagRowOf(dag, this.specOf(dag));
  }

  async triggerRun(dagId: string, options: TriggerOptions = {}): Promise<RunRow> {
    const key = options.requestKey === undefined ? null : checkRequestKey(options.requestKey);
    const dag = this.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    const keyed = key === null ? undefined : this.requestKeys.get(`${dagId}\u0000${key}`);
    if (keyed !== undefined) return runRowOf(this.runs.get(keyed)!);
    // The SQL store retries a collision on (dag_id, scheduled_at) with clock_timestamp(),
    // which moves on by microseconds; virtual time stands still within an event, so the
    // retry here moves on by one millisecond instead.
    const now = this.nowMs();
    for (let k = 0; k < 3; k++) {
      if (this.slotTaken(dagId, now + k)) continue;
      const run = this.insertRun(dag, now + k, 'manual', null);
      if (key !== null) this.requestKeys.set(`${dagId}\u0000${key}`, run.id);
      this.publish({ kind: 'run-queued', shard: dag.shard, runId: run.id, dagId: run.dagId, dagVersion: run.dagVersion, scheduledAt: date(run.scheduledAtMs).toISOString() });
      return runRowOf(run);
    }
    throw new Error(`could not queue a manual run of ${dagId}: scheduled_at collided three times`);
  }

  // ---- reads ----------------------------------------------------------------------------------

  async getRun(runId: string): Promise<RunRow> {
    const run = this.runs.get(runId);
    if (!run) throw new NotFoundError(`run ${runId} does not exist`, { runId });
    return runRowOf(run);
  }

  async listRuns(query: ListRunsQuery): Promise<RunRow[]> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
    const before = query.beforeId !== undefined && isId(query.beforeId) ? Number(query.beforeId) : Number.POSITIVE_INFINITY;
    const out: RunRow[] = [];
    // Runs are inserted in id order, so walking the map backwards is newest first.
    const all = [...this.runs.values()];
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
    const run = this.runs.get(runId);
    if (!run) return [];
    return run.jobIds.map((id) => this.jobRow(this.jobs.get(id)!));
  }

  async getJob(jobId: string): Promise<JobRow> {
    const job = this.jobs.get(jobId);
    if (!job) throw new NotFoundError(`job ${jobId} does not exist`, { jobId });
    return this.jobRow(job);
  }

  async getJobs(jobIds: string[]): Promise<JobRow[]> {
    checkJobsPerRead(jobIds);
    const found = new Set<string>();
    for (const id of jobIds) if (this.jobs.has(id)) found.add(id);
    // Job ids are decimal integers: shorter is smaller, as the SQL store orders them.
    return [...found].sort((a, b) => a.length - b.length || compareIds(a, b)).map((id) => this.jobRow(this.jobs.get(id)!));
  }

  async getResult(jobId: string): Promise<ResultRow | null> {
    const row = this.results.get(jobId);
    return row ? { ...row } : null;
  }

  // ---- leader operations -------------------------------------------------------------------

  async dueDags(tokens: LeaderToken[], limit: number, after?: DuePageKey, options: DueReadOptions = {}): Promise<{ now: Date; dags: DueDag[] }> {
    const now = this.nowMs();
    const until = now + Math.max(0, Math.floor(options.horizonMs ?? 0));
    const skip = new Set(checkSkippedSlots(options.skipSlots ?? []).map((d) => d.getTime()));
    const max = Math.max(0, Math.floor(limit));
    const found: MemDag[] = [];
    const seen = new Set<string>();
    for (const token of tokens) {
      if (!this.leads(token, now)) continue;
      const heap = this.dueIndex.get(token.shard);
      if (!heap) continue;
      this.pruneDue(heap);
      heap.walkWhile((e) => {
        if (e.atMs > until) return false;
        const dag = this.dags.get(e.id);
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
      dags: found.slice(0, max).map((d) => ({ id: d.id, shard: d.shard, version: d.version, spec: this.specOf(d), nextRunAt: date(d.nextRunAtMs!) })),
    };
  }


  /** One leader's run creations (see createScheduledRunsAcross). */
  private async createRunsIn(token: LeaderToken, items: ScheduledRunsItem[]): Promise<CreatedRun[][]> {
    checkJobsPerRun(items.flatMap((i) => (i.start ? [{ dagId: i.dagId, jobs: i.start.jobs }] : [])));
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'createScheduledRuns');
    const seen = new Set<string>();
    return items.map(({ dagId, expectedNextRunAt, slots, nextRunAt, start }) => {
      // A DAG named twice is written for its first item only, as in one SQL statement.
      if (seen.has(dagId)) return [];
      seen.add(dagId);
      const dag = this.dags.get(dagId);
      if (!dag || dag.shard !== token.shard || dag.paused || dag.nextRunAtMs !== expectedNextRunAt.getTime() || dag.nextRunAtMs > now) return [];
      dag.nextRunAtMs = nextRunAt === null ? null : nextRunAt.getTime();
      this.indexDue(dag);
      this.emit({ op: 'dag:next-run', atMs: now, dagId, token, nextRunAtMs: dag.nextRunAtMs });
      const created: MemRun[] = [];
      for (const slot of slots) {
        const at = slot.getTime();
        if (this.slotTaken(dagId, at)) continue;
        created.push(this.insertRun(dag, at, 'schedule', token));
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

  async loadShard(token: LeaderToken): Promise<ShardSnapshot> {
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'loadShard');
    const active = [...(this.activeRunsByShard.get(token.shard) ?? [])].map((id) => this.runs.get(id)!).sort((a, b) => a.num - b.num);
    const jobs: JobRow[] = [];
    const versions = new Map<string, DagSpec>();
    for (const run of active) {
      for (const id of run.jobIds) jobs.push(this.jobRow(this.jobs.get(id)!));
      const key = `${run.dagId}@${run.dagVersion}`;
      if (!versions.has(key)) {
        const v = this.versions.get(run.dagId)?.find((x) => x.version === run.dagVersion);
        if (v) versions.set(key, v.spec);
      }
    }
    jobs.sort((a, b) => Number(a.id) - Number(b.id));
    return { runs: active.map((r) => runRowOf(r)), jobs, versions, now: date(now) };
  }

  async queuedRuns(token: LeaderToken): Promise<RunRow[]> {
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'queuedRuns');
    return [...(this.activeRunsByShard.get(token.shard) ?? [])]
      .map((id) => this.runs.get(id)!)
      .filter((r) => r.state === 'queued')
      .sort((a, b) => a.num - b.num)
      .map((r) => runRowOf(r));
  }


  /** One leader's run starts (see startRunsAcross). */
  private async startRunsIn(token: LeaderToken, items: { runId: string; jobs: NewJob[] }[]): Promise<JobRow[][]> {
    checkJobsPerRun(items);
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'startRun');
    // A run named twice starts once: its second item finds it running already.
    return items.map(({ runId, jobs }) => this.startOne(token, runId, jobs, now));
  }

  private startOne(token: LeaderToken, runId: string, newJobs: NewJob[], now: number): JobRow[] {
    const run = this.runs.get(runId);
    if (!run || run.shard !== token.shard || run.state !== 'queued') return [];
    run.state = 'running';
    run.startedAtMs = now;
    const rows: JobRow[] = [];
    for (const j of newJobs) {
      const num = this.nextJobNum++;
      const job: MemJob = {
        num,
        id: String(num),
        runId: run.id,
        dagId: run.dagId,
        shard: run.shard,
        taskId: j.taskId,
        state: j.state,
        attempt: 0,
        maxAttempts: j.maxAttempts,
        fence: 0,
        holder: null,
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
      };
      this.jobs.set(job.id, job);
      run.jobIds.push(job.id);
      rows.push(this.jobRow(job));
    }
    this.emit({ op: 'run:started', atMs: now, runId, dagId: run.dagId, token, jobIds: [...run.jobIds] });
    return rows;
  }




  /** One leader's run finishes (see finishRunsAcross). */
  private async finishRunsIn(token: LeaderToken, items: { runId: string; state: 'succeeded' | 'failed' }[]): Promise<boolean[]> {
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'finishRun');
    return items.map(({ runId, state }) => {
      const run = this.runs.get(runId);
      if (!run || run.shard !== token.shard) return false;
      if (run.state !== 'running' && !(run.state === 'queued' && state === 'failed')) return false;
      run.state = state;
      run.endedAtMs = now;
      this.activeRunsByShard.get(run.shard)?.delete(run.id);
      this.emit({ op: 'run:finished', atMs: now, runId, dagId: run.dagId, token, state });
      return true;
    });
  }

  /** One leader's grants (see grantLeasesMany). */
  private async grantIn(token: LeaderToken, grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
    const valid = grants.filter((g) => isId(g.jobId));
    if (valid.length === 0) return [];
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'grantLeases');
    const seen = new Set<string>();
    const out: GrantedLease[] = [];
    for (const g of valid) {
      // A job named twice in one batch is granted once, to the first grant that names it.
      if (seen.has(g.jobId)) continue;
      seen.add(g.jobId);
      const job = this.jobs.get(g.jobId);
      if (!job || job.shard !== token.shard || !this.grantable(job, now)) continue;
      out.push(this.lease(job, g.workerId, ttlMs, now, token));
    }
    return out;
  }

  // The multi-leader forms run each group through its single-token step, in order, in
  // one synchronous pass, so they are as atomic as one SQL statement. As in one statement,
  // an item named twice anywhere in the call counts for its first occurrence only.
  async createScheduledRunsAcross(groups: LeaderGroup<ScheduledRunsItem>[]): Promise<(CreatedRun[][] | DeposedLeaderError)[]> {
    // Refused before any group writes, as the one SQL statement is.
    checkJobsPerRun(groups.flatMap((g) => g.items.flatMap((i) => (i.start ? [{ dagId: i.dagId, jobs: i.start.jobs }] : []))));
    return this.acrossPerItem(groups, (i) => i.dagId, [] as CreatedRun[], (token, items) => this.createRunsIn(token, items));
  }

  async startRunsAcross(groups: LeaderGroup<{ runId: string; jobs: NewJob[] }>[]): Promise<(JobRow[][] | DeposedLeaderError)[]> {
    // Refused before any group starts, as the one SQL statement is.
    checkJobsPerRun(groups.flatMap((g) => g.items));
    return this.acrossPerItem(groups, (i) => i.runId, [] as JobRow[], (token, items) => this.startRunsIn(token, items));
  }

  async finishRunsAcross(groups: LeaderGroup<{ runId: string; state: 'succeeded' | 'failed' }>[]): Promise<(boolean[] | DeposedLeaderError)[]> {
    return this.acrossPerItem(groups, (i) => i.runId, false, (token, items) => this.finishRunsIn(token, items));
  }

  async promoteJobsAcross(groups: LeaderGroup<string>[]): Promise<(string[] | DeposedLeaderError)[]> {
    return this.across(firstOccurrences(groups, (id) => id), async (token, items) => this.moveJobs(token, items.map((x) => x.item), 'promoteJobs', ['waiting'], 'ready'));
  }

  async markUpstreamFailedAcross(groups: LeaderGroup<string>[]): Promise<(string[] | DeposedLeaderError)[]> {
    return this.across(firstOccurrences(groups, (id) => id), async (token, items) => this.moveJobs(token, items.map((x) => x.item), 'markUpstreamFailed', ['waiting', 'ready'], 'upstream_failed'));
  }

  /** A multi-leader form whose result has one entry per item; a repeated item gets `repeat`. */
  private acrossPerItem<T, R>(groups: LeaderGroup<T>[], key: (item: T) => string, repeat: R, one: (token: LeaderToken, items: T[]) => Promise<R[]>) {
    return this.across(firstOccurrences(groups, key), async (token, fresh, all) => {
      const results = await one(token, fresh.map((f) => f.item));
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

  async grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
    const out: (GrantedLease[] | DeposedLeaderError)[] = [];
    // Each item is the single-shard grant, in order, in one synchronous pass.
    for (const { token, grants } of items) {
      try {
        out.push(await this.grantIn(token, grants, ttlMs));
      } catch (err) {
        if (err instanceof DeposedLeaderError) out.push(err);
        else throw err;
      }
    }
    return out;
  }

  /** ready -> leased with fence + 1, attempt + 1, holder and expiry, in one step. */
  protected lease(job: MemJob, workerId: string, ttlMs: number, now: number, token: LeaderToken): GrantedLease {
    job.state = 'leased';
    job.fence += 1;
    job.attempt += 1;
    job.holder = workerId;
    job.leaseExpiresAtMs = now + ttlMs;
    job.leasedAtMs = now;
    job.renewed = false;
    job.nextAttemptAtMs = null;
    this.indexLease(job);
    this.emit({ op: 'job:granted', atMs: now, jobId: job.id, dagId: job.dagId, workerId, fence: job.fence, expiresAtMs: now + ttlMs, token });
    return { jobId: job.id, runId: job.runId, dagId: job.dagId, taskId: job.taskId, workerId, fence: job.fence, attempt: job.attempt, leaseExpiresAt: date(now + ttlMs) };
  }

  async sweepExpired(token: LeaderToken, limit: number): Promise<SweptJob[]> {
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, 'sweepExpired');
    const max = Math.max(1, Math.floor(limit));
    const heap = this.leaseIndex.get(token.shard);
    const expired: MemJob[] = [];
    if (heap) {
      this.pruneLeases(heap);
      heap.walkWhile((e) => {
        if (e.atMs > now) return false;
        const job = this.jobs.get(e.id);
        if (job && job.state === 'leased' && job.leaseExpiresAtMs === e.atMs && !expired.includes(job)) expired.push(job);
        return true;
      });
    }
    expired.sort((a, b) => a.leaseExpiresAtMs! - b.leaseExpiresAtMs! || a.num - b.num);
    const swept: SweptJob[] = [];
    for (const job of expired.slice(0, max).sort((a, b) => a.num - b.num)) {
      const holder = job.holder;
      // A lease never renewed was most likely never delivered; see LIMITS.maxLostLeases.
      const lost = !job.renewed && job.lostLeases < LIMITS.maxLostLeases;
      const retry = lost || job.attempt < job.maxAttempts;
      const renewed = job.renewed;
      job.nextAttemptAtMs = lost ? null : retry ? now + this.backoffMs(job) : null;
      if (lost) {
        job.attempt--;
        job.lostLeases++;
      }
      job.renewed = false;
      job.fence = this.revokedFence(job.fence);
      job.holder = null;
      job.leaseExpiresAtMs = null;
      this.leased.delete(job.id);
      job.state = retry ? 'ready' : 'failed';
      if (retry) job.readyAtMs = now;
      job.endedAtMs = retry ? null : now;
      job.lastError = `lease of ${holder ?? 'unknown worker'} expired${lost ? ' before its holder renewed it; the attempt is not counted' : ''}`;
      this.emit({ op: 'job:swept', atMs: now, jobId: job.id, dagId: job.dagId, fence: job.fence, state: retry ? 'ready' : 'failed', token });
      swept.push({ jobId: job.id, runId: job.runId, dagId: job.dagId, previousHolder: holder, fence: job.fence, state: retry ? 'ready' : 'failed', nextAttemptAt: dateOrNull(job.nextAttemptAtMs), renewed, attemptCounted: !lost });
    }
    return swept;
  }

  // ---- worker operations ---------------------------------------------------------------------

  async renewLeases(refs: LeaseRef[], ttlMs: number): Promise<RenewOutcome[]> {
    const now = this.nowMs();
    // Decide every ref against the rows as they were before this statement, as one SQL
    // statement does, then write the renewals.
    const accepted = refs.map((ref) => {
      if (!isId(ref.jobId)) return false;
      const job = this.jobs.get(ref.jobId);
      return !!job && this.fenceAccepts(job, ref, now);
    });
    const outcomes: RenewOutcome[] = [];
    refs.forEach((ref, i) => {
      if (accepted[i]) {
        const job = this.jobs.get(ref.jobId)!;
        job.renewed = true;
        if (job.leaseExpiresAtMs !== now + ttlMs) {
          job.leaseExpiresAtMs = now + ttlMs;
          this.indexLease(job);
        }
        this.emit({ op: 'job:renewed', atMs: now, jobId: job.id, workerId: ref.workerId, fence: ref.fence, expiresAtMs: now + ttlMs });
        outcomes.push({ jobId: ref.jobId, ok: true, leaseExpiresAt: date(now + ttlMs) });
      } else {
        const error = this.refusal(ref, 'renewLease', now);
        outcomes.push({ jobId: ref.jobId, ok: false, code: error.code as 'STALE_FENCE' | 'FORGED_FENCE' | 'LEASE_LOST' | 'NOT_FOUND', message: error.message });
      }
    });
    return outcomes;
  }


  async completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]> {
    const now = this.nowMs();
    return items.map((item) => {
      try {
        return { jobId: item.ref.jobId, ok: true as const, row: this.completeOne(item, now) };
      } catch (err) {
        if (err instanceof FencelineError) return { jobId: item.ref.jobId, ok: false as const, error: err };
        throw err;
      }
    });
  }

  private completeOne({ ref, output: value, logs }: CompleteItem, now: number): JobRow {
    const result = { output: value, logs };
    const output = JSON.stringify(result.output ?? null);
    this.assertResultSize(ref, utf8ByteLength(output) + utf8ByteLength(result.logs ?? ''));
    const job = this.fencedJob(ref, 'completeJob', now, true);
    job.state = 'succeeded';
    job.endedAtMs = now;
    job.leaseExpiresAtMs = null;
    this.leased.delete(job.id);
    this.emit({ op: 'job:completed', atMs: now, jobId: job.id, dagId: job.dagId, workerId: ref.workerId, fence: ref.fence });
    this.writeResult(job, 'succeeded', result.output ?? null, null, result.logs ?? null, now);
    return this.jobRow(job);
  }

  async failJob(ref: LeaseRef, failure: { error: string; retryable: boolean; logs?: string | null }): Promise<JobRow> {
    this.assertResultSize(ref, utf8ByteLength(failure.error) + utf8ByteLength(failure.logs ?? ''));
    const now = this.nowMs();
    const job = this.fencedJob(ref, 'failJob', now, true);
    const retry = failure.retryable && job.attempt < job.maxAttempts;
    job.state = retry ? 'ready' : 'failed';
    job.nextAttemptAtMs = retry ? now + this.backoffMs(job) : null;
    if (retry) job.readyAtMs = now;
    job.endedAtMs = retry ? null : now;
    job.leaseExpiresAtMs = null;
    job.lastError = failure.error;
    this.leased.delete(job.id);
    this.emit({ op: retry ? 'job:retry' : 'job:failed', atMs: now, jobId: job.id, dagId: job.dagId, workerId: ref.workerId, fence: ref.fence });
    this.writeResult(job, 'failed', null, failure.error, failure.logs ?? null, now);
    return this.jobRow(job);
  }

  async releaseJob(ref: LeaseRef): Promise<JobRow> {
    const now = this.nowMs();
    const job = this.fencedJob(ref, 'releaseJob', now, false);
    job.state = 'ready';
    job.fence = this.revokedFence(job.fence);
    job.attempt = Math.max(job.attempt - 1, 0);
    job.holder = null;
    job.leaseExpiresAtMs = null;
    job.nextAttemptAtMs = null;
    job.readyAtMs = now;
    this.leased.delete(job.id);
    this.emit({ op: 'job:released', atMs: now, jobId: job.id, dagId: job.dagId, workerId: ref.workerId, fence: ref.fence, newFence: job.fence });
    return this.jobRow(job);
  }

  // ---- workers -------------------------------------------------------------------------------

  async registerWorker(worker: NewWorker): Promise<WorkerRow> {
    return this.workerTable.register(worker, date(this.nowMs()));
  }

  async heartbeatWorkers(workerIds: string[], nodeId: string | null, skipSeenWithinMs = 0): Promise<void> {
    this.workerTable.heartbeat(workerIds, nodeId, skipSeenWithinMs, date(this.nowMs()));
  }

  async listWorkers(withinMs: number): Promise<WorkerRow[]> {
    return this.workerTable.list(this.nowMs() - withinMs);
  }

  async listLeasedJobs(workerId?: string): Promise<JobRow[]> {
    const out: MemJob[] = [];
    for (const id of this.leased) {
      const job = this.jobs.get(id)!;
      if (job.state === 'leased' && (workerId === undefined || job.holder === workerId)) out.push(job);
    }
    return out.sort((a, b) => a.num - b.num).map((j) => this.jobRow(j));
  }

  // ---- event log -------------------------------------------------------------------------------

  async appendEvents(events: NewEvent[]): Promise<void> {
    if (events.length > 0) this.eventLog.append(events, date(this.nowMs()));
  }

  async listEvents(query: EventQuery): Promise<EventRow[]> {
    return this.eventLog.list(query);
  }

  // ---- notices ---------------------------------------------------------------------------------

  async notify(notice: StoreNotice): Promise<void> {
    this.publish(notice);
  }

  async subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>> {
    this.listeners.add(listener);
    return async () => {
      this.listeners.delete(listener);
    };
  }

  async close(): Promise<void> {
    this.listeners.clear();
  }

  // ---- internals ---------------------------------------------------------------------------------

  protected emit(write: StoreWrite): void {
    this.observer?.(write);
  }

  /**
   * Notices go out after the statement that sent them, as pg_notify delivers on commit;
   * a microtask keeps a listener from running inside the write that published it.
   */
  private publish(notice: StoreNotice): void {
    for (const listener of [...this.listeners]) queueMicrotask(() => listener(notice));
  }

  private deposed(token: LeaderToken, operation: string): DeposedLeaderError {
    return new DeposedLeaderError(`${operation} refused: node ${token.nodeId} no longer leads shard ${token.shard} under epoch ${token.epoch}`, {
      shard: token.shard,
      nodeId: token.nodeId,
      epoch: token.epoch,
      operation,
    });
  }

  private moveJobs(token: LeaderToken, jobIds: string[], operation: string, from: JobState[], to: JobState): string[] {
    const now = this.nowMs();
    if (!this.leads(token, now)) throw this.deposed(token, operation);
    const moved: string[] = [];
    for (const id of new Set(jobIds)) {
      const job = this.jobs.get(id);
      if (!job || job.shard !== token.shard || !from.includes(job.state)) continue;
      job.state = to;
      if (to === 'ready') job.readyAtMs = now;
      else job.endedAtMs = now;
      moved.push(id);
      this.emit({ op: to === 'ready' ? 'job:promoted' : 'job:upstream_failed', atMs: now, jobId: id, token });
    }
    return moved;
  }

  /**
   * The job a fenced write may change, or the typed refusal. With `checkResults`, a write
   * is also refused when the result store already holds this fence or a higher one, so the
   * job update and the result write cannot disagree.
   */
  private fencedJob(ref: LeaseRef, operation: string, now: number, checkResults: boolean): MemJob {
    const job = isId(ref.jobId) ? this.jobs.get(ref.jobId) : undefined;
    const held = this.results.get(ref.jobId);
    if (job && this.fenceAccepts(job, ref, now) && !(checkResults && held && held.fence >= ref.fence)) return job;
    throw this.refusal(ref, operation, now);
  }

  /** Why a fenced write was refused, classified from the job as it is now (as fencing.ts does). */
  private refusal(ref: LeaseRef, operation: string, now: number): FencelineError {
    const base = { jobId: ref.jobId, fence: ref.fence, workerId: ref.workerId, operation };
    const job = isId(ref.jobId) ? this.jobs.get(ref.jobId) : undefined;
    if (!job) return new NotFoundError(`${operation} refused: job ${ref.jobId} does not exist`, { ...base, recordFence: null });
    const details = { ...base, recordFence: job.fence, holder: job.holder, state: job.state };
    if (ref.fence < job.fence) return new StaleFenceError(`${operation} refused: fence ${ref.fence} of job ${ref.jobId} is stale (the record is at ${job.fence})`, details);
    if (ref.fence > job.fence) return new ForgedFenceError(`${operation} refused: fence ${ref.fence} of job ${ref.jobId} was never issued (the record is at ${job.fence})`, details);
    const live = job.leaseExpiresAtMs !== null && job.leaseExpiresAtMs > now;
    const why = job.state !== 'leased' ? `the job is ${job.state}` : job.holder !== ref.workerId ? `it is held by ${job.holder}` : live ? 'the result store already holds this fence' : 'the lease expired';
    return new LeaseLostError(`${operation} refused: worker ${ref.workerId} no longer holds job ${ref.jobId}: ${why}`, details);
  }

  private assertResultSize(ref: LeaseRef, bytes: number): void {
    if (bytes > LIMITS.maxResultBytes) {
      throw new TooLargeError(`result of job ${ref.jobId} is ${bytes} bytes; the limit is ${LIMITS.maxResultBytes}`, { jobId: ref.jobId, bytes, limitBytes: LIMITS.maxResultBytes });
    }
  }

  /** The result store keeps the highest fence it has seen per job. */
  private writeResult(job: MemJob, outcome: 'succeeded' | 'failed', output: unknown, error: string | null, logs: string | null, now: number): void {
    const held = this.results.get(job.id);
    if (held && held.fence >= job.fence) return;
    this.results.set(job.id, { jobId: job.id, fence: job.fence, workerId: job.holder!, outcome, output, error, logs, writtenAt: date(now) });
    this.emit({ op: 'result:written', atMs: now, jobId: job.id, workerId: job.holder!, fence: job.fence, outcome });
  }

  /** min(base * 2^(attempt - 1), max) for the attempt that just ended, as the SQL store computes it. */
  private backoffMs(job: MemJob): number {
    return retryBackoffMs(Math.max(job.attempt, 1), job.retryBackoffMs, job.retryBackoffMaxMs);
  }

  private insertRun(dag: MemDag, scheduledAtMs: number, trigger: 'schedule' | 'manual', token: LeaderToken | null): MemRun {
    const now = this.nowMs();
    const num = this.nextRunNum++;
    const run: MemRun = {
      num,
      id: String(num),
      dagId: dag.id,
      dagVersion: dag.version,
      shard: dag.shard,
      scheduledAtMs,
      trigger,
      state: 'queued',
      createdAtMs: now,
      startedAtMs: null,
      endedAtMs: null,
      jobIds: [],
    };
    this.runs.set(run.id, run);
    this.runKeys.set(`${dag.id}\u0000${scheduledAtMs}`, run.id);
    let active = this.activeRunsByShard.get(dag.shard);
    if (!active) this.activeRunsByShard.set(dag.shard, (active = new Set()));
    active.add(run.id);
    this.emit({ op: 'run:created', atMs: now, runId: run.id, dagId: dag.id, scheduledAtMs, trigger, token });
    return run;
  }

  private indexDue(dag: MemDag): void {
    if (dag.nextRunAtMs === null || dag.paused) return;
    let heap = this.dueIndex.get(dag.shard);
    if (!heap) this.dueIndex.set(dag.shard, (heap = new Heap(byEntry)));
    heap.push({ atMs: dag.nextRunAtMs, id: dag.id, num: 0 });
  }

  /** Drops index entries at the top that no longer describe their DAG. */
  private pruneDue(heap: Heap<IndexEntry>): void {
    for (let top = heap.peek(); top; top = heap.peek()) {
      const dag = this.dags.get(top.id);
      if (dag && !dag.paused && dag.nextRunAtMs === top.atMs) return;
      heap.pop();
    }
  }

  private indexLease(job: MemJob): void {
    this.leased.add(job.id);
    let heap = this.leaseIndex.get(job.shard);
    if (!heap) this.leaseIndex.set(job.shard, (heap = new Heap(byEntry)));
    heap.push({ atMs: job.leaseExpiresAtMs!, id: job.id, num: job.num });
  }

  private pruneLeases(heap: Heap<IndexEntry>): void {
    for (let top = heap.peek(); top; top = heap.peek()) {
      const job = this.jobs.get(top.id);
      if (job && job.state === 'leased' && job.leaseExpiresAtMs === top.atMs) return;
      heap.pop();
    }
  }

  protected jobRow(j: MemJob): JobRow {
    return jobRowOf(j);
  }

  private specOf(dag: MemDag): DagSpec {
    const versions = this.versions.get(dag.id)!;
    return versions[versions.length - 1]!.spec;
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
