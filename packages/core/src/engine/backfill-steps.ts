import { nextBackfillSlots } from '../backfill/plan';
import type { DagId } from '../ids';
import type { BackfillRow } from '../model';
import type { LeaderParts } from './leader-parts';
import type { LeaderState } from './leader-state';

/**
 * Steps one pass may take for one backfill: each step whose slots all had runs already
 * uses no room, so a pass goes on to the next slots rather than waiting a tick for each.
 */
const STEPS_PER_PASS = 10;

/**
 * A shard leader's part in its backfills. For a running backfill it keeps at most the
 * backfill's max active runs unfinished: it computes the next slots from the schedule of
 * the version the backfill pinned and sends them as one epoch-checked step
 * (LeaderStore.advanceBackfill), which creates the runs and records the next slot in one
 * transaction; the runs then start as any queued run does. For a cancelled one it settles
 * it: its queued runs end cancelled under the leader's epoch. Every step is checked by the
 * store against the backfill's row as it is, so a stale read costs a refused step only.
 */
export class BackfillSteps {
  /** Backfills with a pass in flight: one pass at a time per backfill. */
  private readonly busy = new Set<string>();

  constructor(
    private readonly s: LeaderState,
    private readonly parts: Pick<LeaderParts, 'starts' | 'actions'>,
  ) {}

  /** One pass over a backfill the node read as open. */
  async advance(backfill: BackfillRow): Promise<void> {
    if (backfill.shard !== this.s.shard || this.busy.has(backfill.id) || this.s.deposed) return;
    this.busy.add(backfill.id);
    try {
      if (backfill.state === 'cancelled') await this.settle(backfill);
      else if (backfill.state === 'running') await this.create(backfill);
    } finally {
      this.busy.delete(backfill.id);
    }
  }

  private async create(first: BackfillRow): Promise<void> {
    const { s } = this;
    const spec = await s.specFor(first.dagId, first.dagVersion);
    if (!spec) return;
    let row = first;
    for (let k = 0; k < STEPS_PER_PASS && row.state === 'running'; k++) {
      const room = row.maxActiveRuns - row.activeRuns;
      // With every slot written, a step of nothing closes the backfill once its runs ended.
      if (row.nextSlotAt === null && row.activeRuns > 0) return;
      if (row.nextSlotAt !== null && room <= 0) return;
      const next =
        row.nextSlotAt === null
          ? { slotsMs: [], nextSlotMs: null }
          : nextBackfillSlots({ schedule: spec.schedule, nextSlotMs: row.nextSlotAt.getTime(), toMs: row.toAt.getTime(), room });
      const step = {
        backfillId: row.id,
        expectedNextSlotAt: row.nextSlotAt,
        slots: next.slotsMs.map((ms) => new Date(ms)),
        nextSlotAt: next.nextSlotMs === null ? null : new Date(next.nextSlotMs),
      };
      const out = await s.guard(() => s.deps.store.advanceBackfill(s.token, step));
      if (!out) return;
      for (const run of out.created) {
        s.events.created(run, row.id);
        s.queue.enqueue(run);
      }
      const skipped = step.slots.length - out.created.length;
      // The first step that lands is where the backfill starts, whichever leader takes it.
      if (row.createdRuns + row.skippedSlots === 0 && step.slots.length > 0) {
        const { totalSlots, maxActiveRuns, requestedBy } = out.backfill;
        s.events.backfill('started', row.dagId, { backfillId: row.id, totalSlots, maxActiveRuns, requestedBy });
      }
      if (step.slots.length > 0) {
        s.events.backfill('advanced', row.dagId, { backfillId: row.id, created: out.created.length, rerun: out.rerun.length, skipped: skipped - out.rerun.length });
      }
      if (out.backfill.state === 'done') {
        const { createdRuns, skippedSlots, totalSlots } = out.backfill;
        s.events.backfill('done', row.dagId, { backfillId: row.id, createdRuns, skippedSlots, totalSlots });
      }
      if (out.created.length > 0) await this.parts.starts.startQueued(row.dagId);
      // The runs a rerun took over run again once their clears are applied, before the next step counts them.
      if (out.rerun.length > 0) await this.parts.actions.applyPending();
      row = out.backfill;
    }
  }

  private async settle(backfill: BackfillRow): Promise<void> {
    const { s } = this;
    const out = await s.guard(() => s.deps.store.settleBackfill(s.token, backfill.id));
    if (!out) return;
    this.forgetQueued(backfill.dagId, new Set(out.cancelledRunIds));
    s.events.backfill('cancelled', backfill.dagId, { backfillId: backfill.id, cancelledRuns: out.cancelledRunIds.length, runningRunIds: out.runningRunIds });
    for (const runId of out.cancelledRunIds) {
      s.events.finished({ id: runId, dagId: backfill.dagId }, 'cancelled', { backfillId: backfill.id });
    }
    // Its settle stored a pending cancel for each of its runs already running, in the same
    // transaction: they end as operator actions.
    if (out.runningRunIds.length > 0) await this.parts.actions.applyPending();
  }

  /**
   * Takes cancelled runs out of the DAG's queue. While the DAG's starts are in flight the
   * queue is left as it is: the start loop reads it between its awaits, and a run that
   * is no longer queued in the store is skipped there anyway (its start writes nothing).
   */
  private forgetQueued(dagId: DagId, cancelled: Set<string>): void {
    const { s } = this;
    if (s.busy.isBusy(dagId, 'starting')) return;
    s.queue.remove(dagId, cancelled);
  }
}
