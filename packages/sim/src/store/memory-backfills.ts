import {
  NotFoundError,
  isBackfillId,
  parseDagId,
  planBackfill,
  checkBackfillStep,
  backfillFingerprint,
  heldKeyOf,
  defaultRunParams,
  type BackfillId,
  type BackfillRequest,
  type BackfillRow,
  type RunId,
} from '@fenceline/core';
import { type BackfillAdvance, type BackfillSettled, type BackfillStep, type LeaderToken, type ListBackfillsQuery } from '@fenceline/core/store';
import { date, dateOrNull, runRowOf, type MemRun } from './memory-rows';
import { checkFiledRequest, heldKeySlot, type MemoryTables } from './memory-tables';
import type { MemoryRunActions } from './memory-run-actions';

/** A backfill as the memory store keeps it, times in epoch milliseconds. */
interface MemBackfill {
  num: number;
  id: BackfillId;
  dagId: BackfillRow['dagId'];
  dagVersion: number;
  shard: number;
  fromAtMs: number;
  toAtMs: number;
  maxActiveRuns: number;
  mode: BackfillRow['mode'];
  state: BackfillRow['state'];
  totalSlots: number;
  nextSlotAtMs: number | null;
  createdRuns: number;
  skippedSlots: number;
  rerunRuns: number;
  requestedBy: string;
  createdAtMs: number;
  endedAtMs: number | null;
  /** The runs it created, in creation order (runs.backfill_id). */
  runIds: RunId[];
}

/**
 * Backfills in memory, both the catalogue's side (create, read, cancel) and the leader's
 * (advance, settle), with the SQL store's checks and refusals (packages/db/src/store/backfills.ts).
 * Each method runs whole when called, which is what makes a step one transaction here.
 */
export class MemoryBackfills {
  private readonly backfills = new Map<string, MemBackfill>();
  private nextNum = 1;
  /** Backfills started with a request key, by DAG and key, as the SQL store's unique index finds them. */
  private readonly byRequestKey = new Map<string, { backfillId: BackfillId; fingerprint: string }>();

  constructor(
    private readonly tables: MemoryTables,
    /** The store's operator actions, where a settle stores its cancels and a rerun its clears, as the SQL store inserts them into run_actions. */
    private readonly actions: MemoryRunActions,
  ) {}

  async createBackfill(request: BackfillRequest): Promise<BackfillRow> {
    const dagId = parseDagId(request.dagId, 'dagId');
    const held = heldKeyOf(request, () => backfillFingerprint(request));
    const dag = this.tables.dags.get(dagId);
    if (!dag) throw new NotFoundError(`DAG ${dagId} does not exist`, { dagId });
    const keyed = held === null ? undefined : this.byRequestKey.get(heldKeySlot(dagId, held));
    if (held !== null && keyed !== undefined) {
      checkFiledRequest(held, keyed.fingerprint);
      return { ...(await this.getBackfill(keyed.backfillId)), repeated: true };
    }
    const plan = planBackfill(request, this.tables.specOf(dag).schedule);
    const now = this.tables.nowMs();
    const num = this.nextNum++;
    const b: MemBackfill = {
      num,
      id: String(num) as BackfillId,
      dagId,
      dagVersion: dag.version,
      shard: dag.shard,
      fromAtMs: plan.fromMs,
      toAtMs: plan.toMs,
      maxActiveRuns: plan.maxActiveRuns,
      mode: plan.mode,
      state: 'running',
      totalSlots: plan.totalSlots,
      nextSlotAtMs: plan.firstSlotMs,
      createdRuns: 0,
      skippedSlots: 0,
      rerunRuns: 0,
      requestedBy: plan.requestedBy,
      createdAtMs: now,
      endedAtMs: null,
      runIds: [],
    };
    this.backfills.set(b.id, b);
    if (held !== null) this.byRequestKey.set(heldKeySlot(dagId, held), { backfillId: b.id, fingerprint: held.fingerprint });
    this.tables.emit({ op: 'backfill:created', atMs: now, backfillId: b.id, dagId });
    this.tables.publish({ kind: 'backfill-changed', shard: b.shard, backfillId: b.id });
    return this.rowOf(b);
  }

  async getBackfill(backfillId: BackfillId): Promise<BackfillRow> {
    return this.rowOf(this.find(backfillId));
  }

  async listBackfills(query: ListBackfillsQuery): Promise<BackfillRow[]> {
    const limit = Math.min(Math.max(query.limit ?? 50, 1), 1_000);
    return [...this.backfills.values()]
      .filter((b) => query.dagId === undefined || b.dagId === query.dagId)
      .sort((a, b) => b.num - a.num)
      .slice(0, limit)
      .map((b) => this.rowOf(b));
  }

  async cancelBackfill(backfillId: BackfillId): Promise<BackfillRow> {
    const b = this.find(backfillId);
    if (b.state === 'running') {
      b.state = 'cancelled';
      this.tables.emit({ op: 'backfill:cancelled', atMs: this.tables.nowMs(), backfillId: b.id, dagId: b.dagId });
      this.tables.publish({ kind: 'backfill-changed', shard: b.shard, backfillId: b.id });
    }
    return this.rowOf(b);
  }

  async openBackfills(tokens: LeaderToken[]): Promise<BackfillRow[]> {
    const shards = new Set(tokens.map((t) => t.shard));
    return [...this.backfills.values()]
      .filter((b) => shards.has(b.shard) && b.endedAtMs === null)
      .sort((a, b) => a.num - b.num)
      .map((b) => this.rowOf(b));
  }

  async advanceBackfill(token: LeaderToken, step: BackfillStep): Promise<BackfillAdvance | null> {
    checkBackfillStep(step);
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'advanceBackfill');
    const b = this.backfills.get(step.backfillId);
    if (!b || b.shard !== token.shard || b.state !== 'running') return null;
    if (b.nextSlotAtMs !== (step.expectedNextSlotAt?.getTime() ?? null)) return null;
    const slotsMs = step.slots.map((s) => s.getTime());
    if (slotsMs.length > 0 && (b.nextSlotAtMs === null || slotsMs[0]! < b.nextSlotAtMs || slotsMs[slotsMs.length - 1]! >= b.toAtMs)) return null;
    const active = this.activeRuns(b);
    if (active + slotsMs.length > b.maxActiveRuns) return null;
    const dag = this.tables.dags.get(b.dagId);
    const created: MemRun[] = [];
    for (const ms of slotsMs) {
      if (!dag || this.tables.rules.slotTaken(b.dagId, ms)) continue;
      // A backfill's runs take the defaults of the params their version declares, as scheduled runs do.
      const run = this.tables.insertRun(dag, ms, 'backfill', token, b.id, defaultRunParams(this.tables.specOf(dag).params ?? {}));
      b.runIds.push(run.id);
      created.push(run);
    }
    // Rerun mode: an ended run of a taken slot joins the backfill with a pending clear of all its tasks.
    const rerun: RunId[] = [];
    if (b.mode === 'rerun') {
      const createdAt = new Set(created.map((r) => r.scheduledAtMs));
      for (const ms of slotsMs) {
        if (createdAt.has(ms)) continue;
        const runId = this.tables.runKeys.get(`${b.dagId}\u0000${ms}`);
        const run = runId === undefined ? undefined : this.tables.runs.get(runId);
        if (!run || (run.state !== 'succeeded' && run.state !== 'failed' && run.state !== 'cancelled')) continue;
        const spec = this.tables.versions.get(run.dagId)?.find((v) => v.version === run.dagVersion)?.spec;
        run.backfillId = b.id;
        if (!b.runIds.includes(run.id)) b.runIds.push(run.id);
        this.actions.storePending(run.id, `backfill ${b.id}`, `run again by backfill ${b.id}`, 'clear', spec?.tasks.map((t) => t.id) ?? []);
        rerun.push(run.id);
      }
    }
    b.nextSlotAtMs = step.nextSlotAt?.getTime() ?? null;
    b.createdRuns += created.length;
    b.rerunRuns += rerun.length;
    b.skippedSlots += slotsMs.length - created.length - rerun.length;
    if (b.nextSlotAtMs === null && active + created.length + rerun.length === 0) {
      b.state = 'done';
      b.endedAtMs = now;
    }
    this.tables.emit({ op: 'backfill:advanced', atMs: now, backfillId: b.id, dagId: b.dagId, token, nextSlotAtMs: b.nextSlotAtMs });
    return { backfill: this.rowOf(b), created: created.map(runRowOf), rerun };
  }

  async settleBackfill(token: LeaderToken, backfillId: BackfillId): Promise<BackfillSettled | null> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'settleBackfill');
    const b = this.backfills.get(backfillId);
    if (!b || b.shard !== token.shard || b.state !== 'cancelled' || b.endedAtMs !== null) return null;
    const cancelledRunIds: RunId[] = [];
    const runningRunIds: RunId[] = [];
    for (const runId of b.runIds) {
      const run = this.tables.runs.get(runId)!;
      if (run.state === 'running') {
        runningRunIds.push(run.id);
        this.actions.storePending(run.id, `backfill ${b.id}`, 'its backfill was cancelled', 'cancel', []);
      }
      if (run.state !== 'queued') continue;
      run.state = 'cancelled';
      run.endedAtMs = now;
      this.tables.activeRunsByShard.get(run.shard)?.delete(run.id);
      this.tables.emit({ op: 'run:cancelled', atMs: now, runId: run.id, dagId: run.dagId, token });
      cancelledRunIds.push(run.id);
    }
    b.endedAtMs = now;
    return { backfill: this.rowOf(b), cancelledRunIds, runningRunIds };
  }

  private find(backfillId: BackfillId): MemBackfill {
    const b = isBackfillId(backfillId) ? this.backfills.get(backfillId) : undefined;
    if (!b) throw new NotFoundError(`backfill ${backfillId} does not exist`, { backfillId });
    return b;
  }

  /** Its runs queued or running, and the ended ones it took over whose clear is still pending. */
  private activeRuns(b: MemBackfill): number {
    const pending = this.actions.pendingRunsBy(`backfill ${b.id}`);
    let n = 0;
    for (const id of b.runIds) {
      const state = this.tables.runs.get(id)?.state;
      if (state === 'queued' || state === 'running' || pending.has(id)) n++;
    }
    return n;
  }

  private rowOf(b: MemBackfill): BackfillRow {
    const active = this.activeRuns(b);
    const pending = this.actions.pendingRunsBy(`backfill ${b.id}`);
    const finished = b.runIds.filter((id) => {
      const state = this.tables.runs.get(id)?.state;
      return (state === 'succeeded' || state === 'failed' || state === 'cancelled') && !pending.has(id);
    }).length;
    return {
      id: b.id,
      dagId: b.dagId,
      dagVersion: b.dagVersion,
      shard: b.shard,
      fromAt: date(b.fromAtMs),
      toAt: date(b.toAtMs),
      maxActiveRuns: b.maxActiveRuns,
      mode: b.mode,
      state: b.state,
      totalSlots: b.totalSlots,
      nextSlotAt: dateOrNull(b.nextSlotAtMs),
      createdRuns: b.createdRuns,
      skippedSlots: b.skippedSlots,
      rerunRuns: b.rerunRuns,
      activeRuns: active,
      finishedRuns: finished,
      requestedBy: b.requestedBy,
      createdAt: date(b.createdAtMs),
      endedAt: dateOrNull(b.endedAtMs),
    };
  }
}
