import {
  failureProblem,
  failureSizeRefusal,
  fencedWriteRefusal,
  FencelineError,
  LIMITS,
  storableLog,
  resultProblem,
  resultSizeRefusal,
  checkUpstreamSize,
  checkUpstreamTasks,
  utf8ByteLength,
  workerMetaProblem,
  type EffectRecord,
  effectsProblem,
  storedEffects,
  type JobId,
  type JobRow,
  type WorkerRow,
} from '@fenceline/core';
import {
  type UpstreamOutput,
  type CompleteItem,
  type FailItem,
  type FailureWrite,
  type RenewRef,
  type LeaseRef,
  type RenewOutcome,
  type WorkerProtocolStore,
  type WorkerBeat,
  type WriteOutcome,
} from '@fenceline/core/store';
import { date, isId, type MemJob } from './memory-rows';
import type { NewWorker } from './memory-workers';
import type { MemoryTables } from './memory-tables';

/**
 * What the worker protocol writes, in memory (WorkerProtocolStore): registration and
 * heartbeats, and the fenced writes on a lease (renew, complete, fail, hand back), each
 * refused with the typed error the SQL store gives when the fence, the holder or the
 * lease's life does not match (rule 5).
 */
export class MemoryWorkerWrites implements Omit<WorkerProtocolStore, 'now' | 'workerSession'> {
  constructor(private readonly tables: MemoryTables) {}

  async registerWorker(worker: NewWorker): Promise<WorkerRow> {
    // What the SQL store cannot take is refused here too, so both stores answer alike.
    const problem = workerMetaProblem(worker.meta);
    if (problem !== null) throw problem;
    return this.tables.workerTable.register(worker, date(this.tables.nowMs()));
  }

  async heartbeatWorkers(beats: WorkerBeat[], nodeId: string | null, skipSeenWithinMs = 0): Promise<void> {
    this.tables.workerTable.heartbeat(beats, nodeId, skipSeenWithinMs, this.tables.nowMs());
  }

  async renewLeases(refs: RenewRef[], ttlMs: number): Promise<RenewOutcome[]> {
    const now = this.tables.nowMs();
    // Decide every ref against the rows as they were before this statement, as one SQL
    // statement does, then write the renewals.
    const accepted = refs.map((ref) => {
      if (!isId(ref.jobId)) return false;
      const job = this.tables.jobs.get(ref.jobId);
      return !!job && this.tables.rules.fenceAccepts(job, ref, now);
    });
    const outcomes: RenewOutcome[] = [];
    // A job renewed twice in one batch appends its first renewal's lines only, as in SQL.
    const logged = new Set<string>();
    refs.forEach((ref, i) => {
      if (accepted[i]) {
        const job = this.tables.jobs.get(ref.jobId)!;
        job.renewed = true;
        if (job.leaseExpiresAtMs !== now + ttlMs) {
          job.leaseExpiresAtMs = now + ttlMs;
          this.tables.indexLease(job);
        }
        this.tables.emit({ op: 'job:renewed', atMs: now, jobId: job.id, workerId: ref.workerId, fence: ref.fence, expiresAtMs: now + ttlMs });
        if (ref.log && !logged.has(job.id)) {
          logged.add(job.id);
          this.appendLog(job.id, ref.fence, storableLog(ref.log), now);
        }
        outcomes.push({ jobId: ref.jobId, ok: true, leaseExpiresAt: date(now + ttlMs) });
      } else {
        const error = this.refusal(ref, 'renewLease', now);
        outcomes.push({
          jobId: ref.jobId,
          ok: false,
          code: error.code as 'STALE_FENCE' | 'FORGED_FENCE' | 'LEASE_LOST' | 'NOT_FOUND',
          message: error.message,
          cause: error.details.cause as string | undefined,
        });
      }
    });
    return outcomes;
  }

  /** Appends a renewal's log lines to its attempt's streamed log, while it holds less than the limit. */
  private appendLog(jobId: string, fence: number, text: string, now: number): void {
    const key = `${jobId}:${fence}`;
    const chunks = this.tables.logChunks.get(key) ?? [];
    if (chunks.reduce((n, c) => n + c.text.length, 0) >= LIMITS.maxStreamedLogChars) return;
    chunks.push({ jobId: jobId as JobId, fence, seq: chunks.length + 1, text, writtenAt: date(now) });
    this.tables.logChunks.set(key, chunks);
  }

  async completeJobs(items: CompleteItem[]): Promise<WriteOutcome[]> {
    const now = this.tables.nowMs();
    return items.map((item) => outcomeOf(item.ref, () => this.completeOne(item, now)));
  }

  private completeOne({ ref, output: value, logs, effects }: CompleteItem, now: number): JobRow {
    const result = { output: value, logs };
    const problem = resultProblem(ref.jobId, result) ?? effectsProblem(ref.jobId, effects);
    if (problem !== null) throw problem;
    const output = JSON.stringify(result.output ?? null);
    const tooBig = resultSizeRefusal(ref.jobId, utf8ByteLength(output), utf8ByteLength(result.logs ?? ''));
    if (tooBig) throw tooBig;
    const job = this.fencedJob(ref, 'completeJob', now, true);
    job.state = 'succeeded';
    job.endedAtMs = now;
    job.leaseExpiresAtMs = null;
    this.tables.leased.delete(job.id);
    this.tables.emit({ op: 'job:completed', atMs: now, jobId: job.id, dagId: job.dagId, workerId: ref.workerId, fence: ref.fence });
    this.writeResult(job, 'succeeded', result.output ?? null, null, result.logs ?? null, storedEffects(effects), now);
    return this.tables.jobRow(job);
  }

  async failJob(ref: LeaseRef, failure: FailureWrite): Promise<JobRow> {
    return this.failOne({ ...failure, ref }, this.tables.nowMs());
  }

  /** Each failure fenced and answered on its own, as the SQL store's one statement does. */
  async failJobs(items: FailItem[]): Promise<WriteOutcome[]> {
    const now = this.tables.nowMs();
    return this.fencedBatch(
      items.map((item) => item.ref),
      'failJob',
      now,
      (k) => this.failOne(items[k]!, now),
    );
  }

  private failOne(failure: FailItem, now: number): JobRow {
    const { ref } = failure;
    const problem = failureProblem(ref.jobId, failure) ?? effectsProblem(ref.jobId, failure.effects);
    if (problem !== null) throw problem;
    const tooBig = failureSizeRefusal(ref.jobId, utf8ByteLength(failure.error), utf8ByteLength(failure.logs ?? ''));
    if (tooBig) throw tooBig;
    const job = this.fencedJob(ref, 'failJob', now, true);
    const retry = failure.retryable && job.attempt < job.maxAttempts;
    job.state = retry ? 'ready' : 'failed';
    job.nextAttemptAtMs = retry ? now + this.tables.backoffMs(job) : null;
    if (retry) job.readyAtMs = now;
    job.endedAtMs = retry ? null : now;
    job.leaseExpiresAtMs = null;
    job.lastError = failure.error;
    this.tables.leased.delete(job.id);
    this.tables.emit({ op: retry ? 'job:retry' : 'job:failed', atMs: now, jobId: job.id, dagId: job.dagId, workerId: ref.workerId, fence: ref.fence });
    this.writeResult(job, 'failed', null, failure.error, failure.logs ?? null, storedEffects(failure.effects), now);
    return this.tables.jobRow(job);
  }

  /** The accepted outputs of the job's upstream tasks, for the holder of its current lease (as the SQL store reads them). */
  async upstreamOutputs(ref: LeaseRef, taskIds: string[]): Promise<UpstreamOutput[]> {
    const wanted = checkUpstreamTasks(taskIds);
    const job = this.fencedJob(ref, 'upstreamOutputs', this.tables.nowMs(), true);
    // Only the tasks the job's task depends on, in the version its run pinned: asking for any other is asking for nothing.
    const run = this.tables.runs.get(job.runId);
    const spec = run ? this.tables.versions.get(run.dagId)?.find((v) => v.version === run.dagVersion)?.spec : undefined;
    const dependsOn = new Set(spec?.tasks.find((t) => t.id === job.taskId)?.dependsOn ?? []);
    const byTask = new Map<string, UpstreamOutput>();
    for (const id of this.tables.runs.get(job.runId)?.jobIds ?? []) {
      const upstream = this.tables.jobs.get(id);
      const result = this.tables.results.get(id);
      if (!upstream || upstream.state !== 'succeeded' || !result || result.outcome !== 'succeeded' || result.fence !== upstream.fence) continue;
      byTask.set(upstream.taskId, { taskId: upstream.taskId, jobId: upstream.id, fence: result.fence, output: structuredClone(result.output) });
    }
    const found = [...new Set(wanted)].filter((taskId) => dependsOn.has(taskId)).flatMap((taskId) => byTask.get(taskId) ?? []);
    return checkUpstreamSize(ref.jobId, found);
  }

  async releaseJob(ref: LeaseRef): Promise<JobRow> {
    return this.releaseOne(ref, this.tables.nowMs());
  }

  /** Each hand-back fenced and answered on its own, as the SQL store's one statement does. */
  async releaseJobs(refs: LeaseRef[]): Promise<WriteOutcome[]> {
    const now = this.tables.nowMs();
    return this.fencedBatch(refs, 'releaseJob', now, (k) => this.releaseOne(refs[k]!, now));
  }

  /**
   * A batch of fenced writes as the SQL store's one statement judges it: every item is
   * tried in order, and a fence refusal is classified once the whole batch is written,
   * from the job as the statement left it (a hand-back raises the fence, so an item
   * refused before the one that wins would otherwise be named against the old fence).
   */
  private fencedBatch(refs: LeaseRef[], operation: string, now: number, write: (k: number) => JobRow): WriteOutcome[] {
    const outcomes = refs.map((ref, k) => outcomeOf(ref, () => write(k)));
    return outcomes.map((o, k) => (o.ok || !FENCE_CODES.has(o.error.code) ? o : { jobId: o.jobId, ok: false, error: this.refusal(refs[k]!, operation, now) }));
  }

  private releaseOne(ref: LeaseRef, now: number): JobRow {
    const job = this.fencedJob(ref, 'releaseJob', now, false);
    job.state = 'ready';
    job.fence = this.tables.rules.revokedFence(job.fence);
    job.attempt = Math.max(job.attempt - 1, 0);
    job.holder = null;
    job.holderSession = null;
    job.leaseExpiresAtMs = null;
    job.nextAttemptAtMs = null;
    job.readyAtMs = now;
    this.tables.leased.delete(job.id);
    this.tables.emit({ op: 'job:released', atMs: now, jobId: job.id, dagId: job.dagId, workerId: ref.workerId, fence: ref.fence, newFence: job.fence });
    return this.tables.jobRow(job);
  }

  /**
   * The job a fenced write may change, or the typed refusal. With `checkResults`, a write
   * is also refused when the result store already holds this fence or a higher one, so the
   * job update and the result write cannot disagree.
   */
  private fencedJob(ref: LeaseRef, operation: string, now: number, checkResults: boolean): MemJob {
    const job = isId(ref.jobId) ? this.tables.jobs.get(ref.jobId) : undefined;
    const held = this.tables.results.get(ref.jobId);
    if (job && this.tables.rules.fenceAccepts(job, ref, now) && !(checkResults && held && held.fence >= ref.fence)) return job;
    throw this.refusal(ref, operation, now);
  }

  /** Why a fenced write was refused: core's rule, on the job as it is now. */
  private refusal(ref: LeaseRef, operation: string, now: number): FencelineError {
    const job = isId(ref.jobId) ? this.tables.jobs.get(ref.jobId) : undefined;
    const record = job && {
      fence: job.fence,
      holder: job.holder,
      state: job.state,
      live: job.leaseExpiresAtMs !== null && job.leaseExpiresAtMs > now,
      holderSession: job.holderSession,
      currentSession: job.holder === null ? null : this.tables.workerTable.session(job.holder),
    };
    return fencedWriteRefusal(ref, record, operation);
  }

  /** The result store keeps the highest fence it has seen per job; the attempts keep every one. */
  private writeResult(job: MemJob, outcome: 'succeeded' | 'failed', output: unknown, error: string | null, logs: string | null, effects: EffectRecord[] | null, now: number): void {
    const held = this.tables.results.get(job.id);
    if (held && held.fence >= job.fence) return;
    this.tables.results.set(job.id, { jobId: job.id, fence: job.fence, workerId: job.holder!, outcome, output, error, logs, effects, writtenAt: date(now) });
    const attempt = {
      jobId: job.id,
      fence: job.fence,
      attempt: job.attempt,
      workerId: job.holder!,
      outcome,
      output,
      error,
      logs,
      effects,
      startedAt: job.leasedAtMs === null ? null : date(job.leasedAtMs),
      endedAt: date(now),
    };
    const attempts = this.tables.attempts.get(job.id);
    if (attempts) attempts.push(attempt);
    else this.tables.attempts.set(job.id, [attempt]);
    this.tables.emit({ op: 'result:written', atMs: now, jobId: job.id, workerId: job.holder!, fence: job.fence, outcome });
  }
}

/** The codes of a fenced write's refusal (fencedWriteRefusal), as opposed to a refusal of its content. */
const FENCE_CODES = new Set(['STALE_FENCE', 'FORGED_FENCE', 'LEASE_LOST', 'NOT_FOUND']);

/** One item of a batch write: the row `write` left, or its typed refusal. */
function outcomeOf(ref: LeaseRef, write: () => JobRow): WriteOutcome {
  try {
    return { jobId: ref.jobId, ok: true, row: write() };
  } catch (err) {
    if (err instanceof FencelineError) return { jobId: ref.jobId, ok: false, error: err };
    throw err;
  }
}
