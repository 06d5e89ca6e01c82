import { heldKeyOf, runActionFingerprint, checkRunActionRequest, NotFoundError, type JobRow, type RunRow } from '@fenceline/core';
import {
  type JobChange,
  type LeaderToken,
  type RunActionOutcome,
  type RunActionRequest,
  type RunActionRow,
  type RequestedRunAction,
  type RunActionWrite,
} from '@fenceline/core/store';
import { date, runRowOf, type MemJob } from './memory-rows';
import { checkFiledRequest, heldKeySlot, type MemoryTables } from './memory-tables';

/** A stored action, as the memory store keeps it. */
interface MemAction extends Omit<RunActionRow, 'createdAt' | 'appliedAt'> {
  createdAtMs: number;
  appliedAtMs: number | null;
  requestKey: string | null;
}

const rowOf = (a: MemAction): RunActionRow => {
  const { createdAtMs, appliedAtMs, requestKey: _key, ...rest } = a;
  return { ...rest, taskIds: [...rest.taskIds], createdAt: date(createdAtMs), appliedAt: appliedAtMs === null ? null : date(appliedAtMs) };
};

/**
 * Operator actions on runs, with the SQL store's semantics (packages/db run-actions.ts):
 * a request is checked and stored pending with a notice; the leader's write applies every
 * change only if each job is still in the state planned, all at once or not at all.
 */
export class MemoryRunActions {
  private readonly actions = new Map<string, MemAction>();
  private readonly keys = new Map<string, { actionId: string; fingerprint: string }>();
  private nextNum = 1;

  constructor(private readonly tables: MemoryTables) {}

  async requestRunAction(req: RunActionRequest): Promise<RequestedRunAction> {
    const held = heldKeyOf(req, () => runActionFingerprint(req));
    const key = held?.key ?? null;
    const run = this.tables.runs.get(req.runId);
    if (!run) throw new NotFoundError(`run ${req.runId} does not exist`, { runId: req.runId });
    const spec = this.tables.versions.get(run.dagId)?.find((v) => v.version === run.dagVersion)?.spec;
    if (!spec) throw new NotFoundError(`run ${req.runId} does not exist`, { runId: req.runId });
    checkRunActionRequest(spec, req);
    const keyed = held === null ? undefined : this.keys.get(heldKeySlot(req.runId, held));
    if (held !== null && keyed !== undefined) {
      checkFiledRequest(held, keyed.fingerprint);
      return { ...rowOf(this.actions.get(keyed.actionId)!), repeated: true };
    }
    const action: MemAction = {
      id: String(this.nextNum++),
      runId: run.id,
      dagId: run.dagId,
      shard: run.shard,
      kind: req.kind,
      taskIds: [...(req.taskIds ?? [])],
      downstream: req.downstream === true,
      reason: req.reason ?? null,
      requestedBy: req.requestedBy,
      state: 'pending',
      result: null,
      createdAtMs: this.tables.nowMs(),
      appliedAtMs: null,
      requestKey: key,
    };
    this.actions.set(action.id, action);
    if (held !== null) this.keys.set(heldKeySlot(req.runId, held), { actionId: action.id, fingerprint: held.fingerprint });
    this.tables.publish({ kind: 'run-action', shard: run.shard, actionId: action.id, runId: run.id });
    return rowOf(action);
  }

  /**
   * Stores a pending action within another write (a cancelled backfill's settle cancels a
   * run, a rerun-mode step clears one), as the SQL store inserts one in that write's
   * transaction; the run's leader applies it.
   */
  storePending(runId: string, requestedBy: string, reason: string, kind: 'cancel' | 'clear', taskIds: string[]): void {
    const run = this.tables.runs.get(runId);
    if (!run) return;
    const action: MemAction = {
      id: String(this.nextNum++),
      runId: run.id,
      dagId: run.dagId,
      shard: run.shard,
      kind,
      taskIds: [...taskIds],
      downstream: false,
      reason,
      requestedBy,
      state: 'pending',
      result: null,
      createdAtMs: this.tables.nowMs(),
      appliedAtMs: null,
      requestKey: null,
    };
    this.actions.set(action.id, action);
  }

  /** The runs with a pending action by this requester (a backfill's reruns, counted as unfinished). */
  pendingRunsBy(requestedBy: string): Set<string> {
    const out = new Set<string>();
    for (const a of this.actions.values()) if (a.state === 'pending' && a.requestedBy === requestedBy) out.add(a.runId);
    return out;
  }

  async getRunAction(actionId: string): Promise<RunActionRow> {
    const action = this.actions.get(actionId);
    if (!action) throw new NotFoundError(`run action ${actionId} does not exist`, { actionId });
    return rowOf(action);
  }

  async listRunActions(runId: string): Promise<RunActionRow[]> {
    return [...this.actions.values()]
      .filter((a) => a.runId === runId)
      .reverse()
      .slice(0, 200)
      .map(rowOf);
  }

  async pendingRunActions(token: LeaderToken): Promise<RunActionRow[]> {
    const shard = this.tables.shards.get(token.shard);
    if (!shard || shard.holder !== token.nodeId || shard.epoch !== token.epoch) return [];
    return [...this.actions.values()]
      .filter((a) => a.shard === token.shard && a.state === 'pending')
      .slice(0, 1000)
      .map(rowOf);
  }

  async readRun(runId: string): Promise<{ run: RunRow; jobs: JobRow[] } | null> {
    const run = this.tables.runs.get(runId);
    if (!run) return null;
    return { run: runRowOf(run), jobs: run.jobIds.map((id) => this.tables.jobRow(this.tables.jobs.get(id)!)) };
  }

  async applyRunAction(token: LeaderToken, write: RunActionWrite): Promise<RunActionOutcome> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'applyRunAction');
    const action = this.actions.get(write.actionId);
    if (!action || action.shard !== token.shard) throw new NotFoundError(`run action ${write.actionId} does not exist in shard ${token.shard}`, { actionId: write.actionId });
    if (action.state === 'applied') return { kind: 'done', action: rowOf(action) };
    const run = this.tables.runs.get(write.runId);
    if (!run) throw new NotFoundError(`run ${write.runId} does not exist`, { runId: write.runId });
    // All or nothing, as the SQL transaction: check every change before making any.
    const jobs: MemJob[] = [];
    for (const change of write.changes) {
      const job = this.tables.jobs.get(change.jobId);
      if (!job || job.runId !== write.runId || job.state !== change.from) return { kind: 'conflict' };
      jobs.push(job);
    }
    const revoked: { jobId: MemJob['id']; fence: number; holder: MemJob['holder'] }[] = [];
    write.changes.forEach((change, i) => {
      const job = jobs[i]!;
      this.move(job, change, write.note, now, token);
      if (change.from === 'leased') revoked.push({ jobId: job.id, fence: job.fence, holder: job.holder });
    });
    if (write.runState === 'cancelled' && (run.state === 'queued' || run.state === 'running')) {
      run.state = 'cancelled';
      run.endedAtMs = now;
      this.tables.activeRunsByShard.get(run.shard)?.delete(run.id);
      this.tables.emit({ op: 'run:finished', atMs: now, runId: run.id, dagId: run.dagId, token, state: 'cancelled' });
    } else if (write.runState === 'running' && (run.state === 'succeeded' || run.state === 'failed' || run.state === 'cancelled')) {
      run.state = 'running';
      run.endedAtMs = null;
      run.startedAtMs ??= now;
      let active = this.tables.activeRunsByShard.get(run.shard);
      if (!active) this.tables.activeRunsByShard.set(run.shard, (active = new Set()));
      active.add(run.id);
      this.tables.emit({ op: 'run:reopened', atMs: now, runId: run.id, dagId: run.dagId, token });
    }
    action.state = 'applied';
    action.appliedAtMs = now;
    action.result = { ...write.result, runState: run.state };
    return { kind: 'applied', action: rowOf(action), run: runRowOf(run), jobs: run.jobIds.map((id) => this.tables.jobRow(this.tables.jobs.get(id)!)), revoked };
  }

  private move(job: MemJob, change: JobChange, note: string, now: number, token: LeaderToken): void {
    const fenceBefore = job.fence;
    if (change.to === 'waiting') {
      job.attempt = 0;
      job.lostLeases = 0;
      job.fence = job.fence + 1;
      job.holder = null;
      job.holderSession = null;
      job.nextAttemptAtMs = null;
      job.readyAtMs = null;
      job.leasedAtMs = null;
      job.renewed = false;
      job.endedAtMs = null;
      job.lastError = null;
    } else if (change.to === 'upstream_failed') {
      job.endedAtMs = now;
    } else {
      job.fence = job.fence + 1;
      job.endedAtMs = now;
      job.lastError = change.to === 'succeeded' ? job.lastError : note;
    }
    job.state = change.to;
    job.leaseExpiresAtMs = null;
    this.tables.leased.delete(job.id);
    this.tables.emit({ op: 'job:acted', atMs: now, jobId: job.id, dagId: job.dagId, token, from: change.from, to: change.to, fenceBefore, fence: job.fence });
  }
}
