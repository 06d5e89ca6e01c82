import { FencelineError, ForbiddenError, InvalidInputError, UnauthorizedError } from '../errors';
import { clipText } from '../input/free-form';
import type { JobId, WorkerId } from '../ids';
import type { JobRow } from '../model';
import type { EffectRecord } from '../input/effect-reports';
import type { CompleteItem, FailItem, LeaseRef, RenewOutcome, RenewRef, StoreNotice, UpstreamOutput, WriteOutcome } from '../store';
import { Batcher } from './batcher';
import type { NodeContext } from './node-context';
import { releaseReason, type ReleaseCause } from './revocation';
import { answerFor, isFencedRefusal, reasonOf, refusalReason, workerRefusal } from './refusals';
import type { ShardLeader } from './shard-leader';
import type { PollItem, PollRequest } from './worker-pool';
import { DEFAULT_OFFER, type WorkerOffer } from '../routing/offer';

/** What the worker protocol needs from the rest of the node. */
export interface ProtocolDeps {
  /** The leader of a shard on this node, if any. */
  leader(shard: number): ShardLeader | undefined;
  hasReadyWork(): boolean;
  kick(): void;
  /** Watches the result-write path for progress (WriteProgress); absent, nothing watches it. */
  writes?: { track<T>(count: number, write: () => Promise<T>): Promise<T> };
}

type ResultInput = { jobId: JobId; fence: number; output?: unknown; logs?: string | null; effects?: EffectRecord[] | null };

/** A worker's failure of one job, with the effect outcomes its attempt reported. */
export type FailInput = { jobId: JobId; fence: number; error: string; retryable?: boolean; logs?: string | null; effects?: EffectRecord[] | null };

/** Who writes: the worker and the session key it presents (see LeaseRef.session). */
export interface WorkerSessionRef {
  workerId: WorkerId;
  session: string;
}

/**
 * The pool a caller's credential serves (null or absent: any, as in development mode). A
 * worker of such a caller may offer that pool only: register and poll refuse another as
 * FORBIDDEN naming `offer.pool`, and a worker that offers nothing serves that pool.
 */
export interface PoolBound {
  pool?: string | null;
}

export interface RegisterInput extends WorkerSessionRef, PoolBound {
  slots: number;
  /** What it can run; the default offer (in its credential's pool) when absent. */
  offer?: WorkerOffer;
  meta?: Record<string, unknown>;
  /** The credential the worker authenticated with; null in development mode. */
  credentialId: string | null;
}

export interface RegisterAnswer {
  nodeId: string;
  leaseTtlMs: number;
  renewIntervalMs: number;
  pollWaitMs: number;
}

/**
 * The worker protocol as a node serves it: register, long poll, renew, complete, fail and
 * hand back. Renewals and completions of every worker share store statements; a job's
 * end is passed on to its shard's leader here, or told to the node that leads it.
 */
export class WorkerProtocol {
  private readonly renewBatcher: Batcher<RenewRef, RenewOutcome>;
  private readonly completeBatcher: Batcher<CompleteItem, WriteOutcome>;
  private readonly failBatcher: Batcher<FailItem, WriteOutcome>;
  private readonly releaseBatcher: Batcher<LeaseRef, WriteOutcome>;
  /**
   * Each worker's current session as this node last saw it (registered here, or read from
   * the store when a poll brought another): polls cost no store read, and one from a
   * process whose id another process registered since is refused.
   */
  private readonly sessions = new Map<WorkerId, string>();

  constructor(
    private readonly c: NodeContext,
    private readonly d: ProtocolDeps,
  ) {
    this.renewBatcher = new Batcher(c.timers, { windowMs: c.config.renewBatchWindowMs, maxBatch: 1000 }, (items) => c.store.renewLeases(items, c.config.leaseTtlMs));
    // Completions from every worker share a statement: while one batch commits, the next
    // gathers, so the batch size follows the load and an idle node answers at once.
    this.completeBatcher = new Batcher(c.timers, { windowMs: 0, maxBatch: 500, maxInFlight: 2 }, (items) => c.store.completeJobs(items));
    // Failures and hand-backs, the workers' own and this node's, are batched the same way.
    this.failBatcher = new Batcher(c.timers, { windowMs: 0, maxBatch: 500, maxInFlight: 2 }, (items) => c.store.failJobs(items));
    this.releaseBatcher = new Batcher(c.timers, { windowMs: 0, maxBatch: 500, maxInFlight: 2 }, (refs) => c.store.releaseJobs(refs));
  }

  /**
   * Registers the worker under its session, which becomes its current one: leases are
   * granted to it from now on, and an earlier session's writes are refused.
   */
  register(input: RegisterInput): Promise<RegisterAnswer> {
    const { c } = this;
    const { workerId, slots } = input;
    if (!Number.isInteger(slots) || slots < 1 || slots > 10_000) throw new InvalidInputError(`slots must be an integer from 1 to 10000, got ${slots}`, { field: 'slots' });
    const offer = boundOffer(input.offer, input.pool) ?? (input.pool ? { ...DEFAULT_OFFER, pool: input.pool } : undefined);
    // Another process registering the id ends the session leases were granted to: what
    // waits here for the old one's next poll goes back, never to the new session, which
    // could not write it and must not be shown it.
    const previous = this.sessions.get(workerId);
    if (previous !== undefined && previous !== input.session) c.pool.dropOutbox(workerId);
    c.pool.touch(workerId, slots, offer);
    c.emit({ type: 'worker:registered', workerId, nodeId: c.nodeId, data: { slots, credentialId: input.credentialId } });
    return c.store
      .registerWorker({
        id: workerId,
        slots,
        nodeId: c.nodeId,
        meta: offer ? { ...input.meta, offer } : (input.meta ?? {}),
        session: input.session,
        credentialId: input.credentialId,
      })
      .then(() => this.sessions.set(workerId, input.session))
      .then(() => ({ nodeId: c.nodeId, leaseTtlMs: c.config.leaseTtlMs, renewIntervalMs: c.config.renewIntervalMs, pollWaitMs: c.config.pollWaitMs }));
  }

  /**
   * Long poll: answered the moment a lease is granted to this worker, or empty after
   * `waitMs` (at most the node's pollWaitMs, which is also the default).
   */
  async poll(poll: Omit<PollRequest, 'waitMs'> & PoolBound & { waitMs?: number; session: string }, cancelled?: { onCancel(fn: () => void): void }): Promise<PollItem[]> {
    const { c } = this;
    // A poll without an offer keeps the one made before, unless this node knows none in the
    // credential's pool (it never saw the register): then it serves the credential's pool.
    const known = c.pool.offerOf(poll.workerId);
    const offer = boundOffer(poll.offer, poll.pool) ?? (poll.pool && known?.pool !== poll.pool ? { ...DEFAULT_OFFER, pool: poll.pool } : undefined);
    await this.checkSession(poll.workerId, poll.session);
    const waitMs = Math.min(poll.waitMs ?? c.config.pollWaitMs, c.config.pollWaitMs);
    // A new waiter matters only if some leader has work to hand out; new work kicks a round itself.
    const request: PollRequest = { workerId: poll.workerId, slots: poll.slots, freeSlots: poll.freeSlots, waitMs, ...(offer ? { offer } : {}) };
    return c.pool.wait(request, () => this.d.hasReadyWork() && this.d.kick(), cancelled);
  }

  /**
   * Leases are granted to a worker's current session, so a poll from any other would be
   * handed jobs it cannot write: it is refused instead, and the store is read only when
   * the session is not the one this node knows.
   */
  private async checkSession(workerId: WorkerId, session: string): Promise<void> {
    if (this.sessions.get(workerId) === session) return;
    const current = await this.c.store.workerSession(workerId);
    if (current !== null) this.sessions.set(workerId, current);
    if (current !== session) {
      this.c.metrics.inc('polls_refused_total');
      throw new UnauthorizedError(`poll refused: this is not the current session of worker ${workerId} (register first; another process may have registered it since)`, {
        field: 'session',
      });
    }
  }

  /** One worker's renewals; they share one store statement with other renewals of the batching window. */
  renew(input: WorkerSessionRef & { leases: { jobId: JobId; fence: number; log?: string }[] }): Promise<RenewOutcome[]> {
    return this.renewMany(input.leases.map((l) => ({ ...l, workerId: input.workerId, session: input.session })));
  }

  /**
   * Renewals of leases held by many worker identities, for a process that hosts many of
   * them and renews them in one request; each lease is still checked against its own
   * holder and session. A refusal is answered without its reason (refusals.ts).
   */
  async renewMany(refs: (RenewRef & { session: string })[]): Promise<RenewOutcome[]> {
    const { c } = this;
    for (const ref of refs) c.pool.seen(ref.workerId);
    const outcomes = await this.renewBatcher.submitMany(refs);
    outcomes.forEach((o, i) => {
      const ref = refs[i]!;
      if (o.ok) {
        c.metrics.inc('renewals_total');
        // Renewals go to the event log too (in the same batched flush as every event), so
        // the console can draw each attempt's renewals on the run timeline.
        c.emit({ type: 'lease:renewed', jobId: o.jobId, workerId: ref.workerId, fence: ref.fence, data: { leaseExpiresAt: o.leaseExpiresAt.toISOString() } });
      } else this.refused(reasonOf(o.code, o.cause), o.jobId, ref.workerId, { op: 'renew', message: o.message });
    });
    return outcomes.map((o, i) => {
      if (o.ok) return o;
      const answer = workerRefusal('renew', o.jobId, refs[i]!.fence);
      return { jobId: o.jobId, ok: false as const, code: 'LEASE_LOST' as const, message: answer.message };
    });
  }

  async complete(input: WorkerSessionRef & ResultInput): Promise<JobRow> {
    const [outcome] = await this.completeMany({ workerId: input.workerId, session: input.session, results: [input] });
    if (!outcome!.ok) throw outcome!.error;
    return outcome!.row;
  }

  /**
   * Several results of one worker in one call. Each is fenced on its own and answered on
   * its own: an accepted result's row, or its typed refusal. The worker is answered once
   * the results are durable; the leaders' follow-up (readiness downstream, finished runs)
   * runs after, since it is theirs to finish and repair, not the worker's to wait for.
   */
  async completeMany(input: WorkerSessionRef & { results: ResultInput[] }): Promise<WriteOutcome[]> {
    const { c } = this;
    const { workerId, session, results: items } = input;
    c.pool.seen(workerId);
    const submit = () =>
      this.completeBatcher.submitMany(
        items.map((i) => ({ ref: { jobId: i.jobId, fence: i.fence, workerId, session }, output: i.output, logs: i.logs ?? null, effects: i.effects ?? null })),
      );
    const outcomes = await (this.d.writes ? this.d.writes.track(items.length, submit) : submit());
    const ended: JobRow[] = [];
    for (const o of outcomes) {
      if (o.ok) {
        const row = o.row;
        c.metrics.inc('jobs_succeeded_total');
        // The store wrote when the job ended; the event takes that time rather than this
        // node's estimate of it, which a loaded machine puts a round trip or more later.
        c.emit({
          type: 'job:succeeded',
          at: row.endedAt ?? undefined,
          shard: row.shard,
          dagId: row.dagId,
          runId: row.runId,
          jobId: row.id,
          workerId,
          fence: row.fence,
          nodeId: c.nodeId,
        });
        ended.push(row);
      } else if (o.error.code !== 'INVALID_INPUT') this.refused(refusalReason(o.error), o.jobId, workerId, { op: 'complete', ...o.error.details });
    }
    // Each result frees a slot of the worker: a poll it has open here may now take that
    // many more jobs, without the worker having to poll again to say so. Only results sent
    // under the worker's current session count: any credential of the pool may send a
    // batch naming the worker, and it must not make this node hand the worker more jobs
    // than it has slots for.
    if (this.sessions.get(workerId) === session && c.pool.credit(workerId, items.length) && this.d.hasReadyWork()) this.d.kick();
    void this.afterJobsEnd(ended);
    return outcomes.map((o, i) => (o.ok ? o : { jobId: o.jobId, ok: false as const, error: answerFor(o.error, 'complete', o.jobId, items[i]!.fence) }));
  }

  async fail(input: WorkerSessionRef & FailInput): Promise<JobRow> {
    return only(await this.failMany({ workerId: input.workerId, session: input.session, failures: [input] }));
  }

  /**
   * Several failed attempts of one worker in one call, each fenced and answered on its own
   * (its row, or its refusal as the worker may hear it), as completeMany does; the leaders'
   * follow-up runs before the worker is answered, as it did for one failure.
   */
  async failMany(input: WorkerSessionRef & { failures: FailInput[] }): Promise<WriteOutcome[]> {
    const { c } = this;
    const { workerId, session, failures: items } = input;
    c.pool.seen(workerId);
    const outcomes = await this.failBatcher.submitMany(
      items.map((i) => ({
        ref: { jobId: i.jobId, fence: i.fence, workerId, session },
        error: i.error,
        retryable: i.retryable ?? true,
        logs: i.logs ?? null,
        effects: i.effects ?? null,
      })),
    );
    const ended: JobRow[] = [];
    outcomes.forEach((o, k) => {
      if (!o.ok) {
        if (o.error.code !== 'INVALID_INPUT') this.refused(refusalReason(o.error), o.jobId, workerId, { op: 'fail', ...o.error.details });
        return;
      }
      const row = o.row;
      c.metrics.inc(row.state === 'failed' ? 'jobs_failed_total' : 'jobs_retried_total');
      c.emit({
        type: row.state === 'failed' ? 'job:failed' : 'job:retrying',
        // The store's own time of the failure: the job's end, or its new ready time.
        at: (row.state === 'failed' ? row.endedAt : row.readyAt) ?? undefined,
        shard: row.shard,
        dagId: row.dagId,
        runId: row.runId,
        jobId: row.id,
        workerId,
        fence: row.fence,
        nodeId: c.nodeId,
        // Clipped whole characters only: a half pair would fail the event flush for every event in it.
        data: { error: clipText(items[k]!.error, 500), nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null },
      });
      ended.push(row);
    });
    if (ended.length > 0) c.pool.credit(workerId, ended.length);
    await this.afterJobsEnd(ended);
    return answered(outcomes, 'fail', items);
  }

  /**
   * The accepted outputs of a job's upstream tasks, for the worker that holds its current
   * lease: fenced in the store like a write, and refused the same way (refusals.ts). Any
   * node answers it; a worker asks only for a job that has dependencies.
   */
  async upstream(input: WorkerSessionRef & { jobId: JobId; fence: number; taskIds: string[] }): Promise<UpstreamOutput[]> {
    const { workerId } = input;
    this.c.pool.seen(workerId);
    const ref: LeaseRef = { jobId: input.jobId, fence: input.fence, workerId, session: input.session };
    return this.fenced('upstream', ref, () => this.c.store.upstreamOutputs(ref, input.taskIds));
  }

  async release(input: WorkerSessionRef & { jobId: JobId; fence: number; reason?: ReleaseCause }): Promise<JobRow> {
    return only(await this.releaseMany({ workerId: input.workerId, session: input.session, releases: [input] }));
  }

  /** Several hand-backs of one worker in one call, each fenced and answered on its own, in order. */
  async releaseMany(input: WorkerSessionRef & { releases: { jobId: JobId; fence: number; reason?: ReleaseCause }[] }): Promise<WriteOutcome[]> {
    const { workerId, session, releases: items } = input;
    this.c.pool.seen(workerId);
    const outcomes = await this.handBackRefs(
      items.map((i) => ({ jobId: i.jobId, fence: i.fence, workerId, session })),
      items.map((i) => releaseReason(i.reason)),
    );
    const accepted = outcomes.filter((o) => o.ok).length;
    if (accepted > 0) this.c.pool.credit(workerId, accepted);
    return answered(outcomes, 'release', items);
  }

  /**
   * The node hands back, for its worker, a lease it granted and never delivered (an
   * unclaimed lease, a worker gone from the pool); with no worker request involved, it
   * presents no session.
   */
  async handBack(jobId: JobId, fence: number, workerId: WorkerId, reason: string): Promise<JobRow> {
    return only(answered(await this.handBackRefs([{ jobId, fence, workerId, session: null }], [reason]), 'release', [{ fence }]));
  }

  /**
   * Hands leases back through the batched statement: each accepted one is logged as an
   * event and told to its leader (the shard's leader in memory, another node by notice);
   * each refusal is logged with its precise reason.
   */
  private async handBackRefs(refs: LeaseRef[], reasons: string[]): Promise<WriteOutcome[]> {
    const { c } = this;
    const outcomes = await this.releaseBatcher.submitMany(refs);
    const ended: JobRow[] = [];
    outcomes.forEach((o, k) => {
      const ref = refs[k]!;
      if (!o.ok) {
        if (o.error.code !== 'INVALID_INPUT') this.refused(refusalReason(o.error), o.jobId, ref.workerId, { op: 'release', ...o.error.details });
        return;
      }
      const row = o.row;
      c.emit({
        type: 'lease:released',
        shard: row.shard,
        dagId: row.dagId,
        runId: row.runId,
        jobId: ref.jobId,
        workerId: ref.workerId,
        fence: row.fence,
        nodeId: c.nodeId,
        data: { reason: reasons[k] },
      });
      ended.push(row);
    });
    await this.afterJobsEnd(ended);
    return outcomes;
  }

  /** The workers' writes have landed: the shard's leader reacts in memory; if another node leads it, that node is told. */
  private async afterJobsEnd(rows: JobRow[]): Promise<void> {
    const { c } = this;
    // The workers' writes have landed; a failure from here on is the leader's to repair
    // (its reconciliation re-reads the run), not the worker's to retry.
    const local = new Map<ShardLeader, JobRow[]>();
    const remote: JobRow[] = [];
    for (const row of rows) {
      const leader = this.d.leader(row.shard);
      if (!leader?.hasJob(row.id)) remote.push(row);
      else if (local.has(leader)) local.get(leader)!.push(row);
      else local.set(leader, [row]);
    }
    await Promise.all([
      ...[...local].map(([leader, ended]) => leader.jobsEnded(ended).catch((err) => c.error('after-job-end', err))),
      ...endedNotices(remote).map((notice) => c.store.notify(notice).catch((err) => c.error('after-job-end', err))),
    ]);
  }

  /** Runs a fenced write: a refusal is logged with its precise reason and answered without it. */
  private async fenced<T>(op: string, ref: LeaseRef, fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof FencelineError)) throw err;
      if (err.code !== 'INVALID_INPUT') this.refused(refusalReason(err), ref.jobId, ref.workerId, { op, ...err.details });
      throw isFencedRefusal(err) ? workerRefusal(op, ref.jobId, ref.fence) : err;
    }
  }

  /** The operator's view of a refusal: the precise reason, in the metrics and the event log. */
  private refused(reason: string, jobId: JobId, workerId: WorkerId, data: Record<string, unknown>): void {
    const { c } = this;
    c.metrics.inc(`writes_refused_total{reason="${reason}"}`);
    c.emit({ type: 'write:fenced', jobId, workerId, nodeId: c.nodeId, data: { ...data, reason, jobId, workerId } });
  }
}

/** The offer as given, refused when it names another pool than the caller's credential serves. */
function boundOffer(offer: WorkerOffer | undefined, pool: string | null | undefined): WorkerOffer | undefined {
  if (offer && pool && offer.pool !== pool) {
    throw new ForbiddenError(`offer.pool: this credential serves only pool ${pool}, not ${offer.pool}`, { field: 'offer.pool' });
  }
  return offer;
}

/**
 * Job ends another node's leader must hear of, one notice per shard and per
 * NOTICE_JOB_IDS jobs: after a failover, every result for a job delivered by the old
 * leader comes through this node, and a notice (and a read on the far side) per job was a
 * store round trip per job. NOTIFY payloads are limited to 8,000 bytes; 200 ids of up to
 * 19 digits stay well inside it.
 */
const NOTICE_JOB_IDS = 200;

export function endedNotices(rows: Pick<JobRow, 'id' | 'shard'>[]): Extract<StoreNotice, { kind: 'job-ended' }>[] {
  const byShard = new Map<number, JobId[]>();
  for (const row of rows) {
    const ids = byShard.get(row.shard);
    if (ids) ids.push(row.id);
    else byShard.set(row.shard, [row.id]);
  }
  const notices: Extract<StoreNotice, { kind: 'job-ended' }>[] = [];
  for (const [shard, ids] of byShard) {
    for (let i = 0; i < ids.length; i += NOTICE_JOB_IDS) {
      const part = ids.slice(i, i + NOTICE_JOB_IDS);
      notices.push({ kind: 'job-ended', shard, jobId: part[0]!, jobIds: part });
    }
  }
  return notices;
}

/** Each refusal of a batch as the worker may hear it (refusals.ts), in order. */
function answered(outcomes: WriteOutcome[], operation: string, items: { fence: number }[]): WriteOutcome[] {
  return outcomes.map((o, i) => (o.ok ? o : { jobId: o.jobId, ok: false as const, error: answerFor(o.error, operation, o.jobId, items[i]!.fence) }));
}

/** The row of a batch of one, or its refusal thrown. */
function only(outcomes: WriteOutcome[]): JobRow {
  const o = outcomes[0]!;
  if (!o.ok) throw o.error;
  return o.row;
}
