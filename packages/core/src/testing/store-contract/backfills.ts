import { describe, expect, it } from 'vitest';
import { parseBackfillId, parseDagId } from '../../ids';
import { LIMITS } from '../../limits';
import type { BackfillRow } from '../../model';
import type { BackfillStep, LeaderToken, StoreNotice } from '../../store';
import type { ContractContext } from './context';
import { eventually, LONG_TTL_MS, newJobs, refusedWith, SHARD_COUNT, spec, unique } from './fixtures';
import { finishRun, markUpstreamFailed, startRun } from './one-leader';

const MINUTE_MS = 60_000;
/** A range in the past, on whole minutes, so an every-minute DAG has one slot per minute of it. */
const FROM = new Date('2026-01-01T00:00:00.000Z');
const minutes = (n: number): Date => new Date(FROM.getTime() + n * MINUTE_MS);
const everyMinute = { kind: 'interval' as const, everyMs: MINUTE_MS };

/** The store contract's part on backfills: the catalogue's request and cancel, the leader's steps and settling. */
export function backfillsContract(c: ContractContext): void {
  /** A led shard with an every-minute DAG in it. */
  async function minuteDag(): Promise<{ token: LeaderToken; dagId: ReturnType<typeof parseDagId> }> {
    const { token, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'backfill');
    await c.store.putDag(spec(dagId, { schedule: everyMinute }), SHARD_COUNT);
    return { token, dagId };
  }

  function step(b: BackfillRow, slots: number[], next: number | null): BackfillStep {
    return { backfillId: b.id, expectedNextSlotAt: b.nextSlotAt, slots: slots.map(minutes), nextSlotAt: next === null ? null : minutes(next) };
  }

  describe('backfills', () => {
    it('createBackfill records the range with its slot count and tells the shard leader', async () => {
      const { token, dagId } = await minuteDag();
      const seen: StoreNotice[] = [];
      const unsubscribe = await c.store.subscribe((n) => seen.push(n));
      try {
        const b = await c.store.createBackfill({ dagId, from: FROM, to: minutes(10), maxActiveRuns: 3, requestedBy: 'ops' });
        expect(b).toMatchObject({ dagId, dagVersion: 1, shard: token.shard, state: 'running', mode: 'skip', totalSlots: 10, maxActiveRuns: 3, requestedBy: 'ops' });
        expect(b).toMatchObject({ createdRuns: 0, skippedSlots: 0, activeRuns: 0, finishedRuns: 0, endedAt: null });
        expect(b.nextSlotAt?.toISOString()).toBe(FROM.toISOString());
        await eventually(() => seen.some((n) => n.kind === 'backfill-changed' && n.backfillId === b.id && n.shard === token.shard));
        expect((await c.store.getBackfill(b.id)).totalSlots).toBe(10);
        expect((await c.store.openBackfills([token])).map((o) => o.id)).toEqual([b.id]);
        expect((await c.store.listBackfills({ dagId })).map((o) => o.id)).toEqual([b.id]);
      } finally {
        await unsubscribe();
      }
    });

    it('createBackfill with a request key starts one backfill however often it is sent, and a bad key is refused', async () => {
      const { dagId } = await minuteDag();
      const base = { dagId, from: FROM, to: minutes(10), requestedBy: 'ops' };
      const first = await c.store.createBackfill({ ...base, requestKey: 'nightly-fill-1', requestOwner: 'ann' });
      // Sent again: the first backfill, nothing new; the default cap and mode spelt out are the same request.
      expect(first.repeated).toBeUndefined();
      expect(await c.store.createBackfill({ ...base, mode: 'skip', requestKey: 'nightly-fill-1', requestOwner: 'ann' })).toEqual({ ...first, repeated: true });
      // The key sent with another request is refused, naming the key, and starts nothing.
      const reused = await refusedWith(c.store.createBackfill({ ...base, to: minutes(5), requestKey: 'nightly-fill-1', requestOwner: 'ann' }), 'KEY_REUSED');
      expect(reused.details.field).toBe('requestKey');
      // The key is its owner's: another owner's request with it is a request of its own.
      const bobs = await c.store.createBackfill({ ...base, to: minutes(5), requestKey: 'nightly-fill-1', requestOwner: 'bob' });
      expect(bobs.id).not.toBe(first.id);
      const other = await c.store.createBackfill({ ...base, requestKey: 'nightly-fill-2', requestOwner: 'ann' });
      expect(other.id).not.toBe(first.id);
      const err = await refusedWith(c.store.createBackfill({ ...base, requestKey: 'not a key!' }), 'INVALID_INPUT');
      expect(err.details.field).toBe('requestKey');
      expect((await c.store.listBackfills({ dagId })).map((b) => b.id).sort()).toEqual([first.id, bobs.id, other.id].sort());
    });

    it('createBackfill refuses a bad request, naming the field, and records nothing', async () => {
      const { dagId } = await minuteDag();
      const manual = parseDagId(unique('backfill-manual'));
      await c.store.putDag(spec(manual), SHARD_COUNT);
      const base = { dagId, from: FROM, to: minutes(10), requestedBy: 'ops' };
      const refusals: [Parameters<typeof c.store.createBackfill>[0], string][] = [
        [{ ...base, to: FROM }, 'to'],
        [{ ...base, from: new Date(NaN) }, 'from'],
        [{ ...base, dagId: manual }, 'dagId'],
        [{ ...base, maxActiveRuns: 0 }, 'maxActiveRuns'],
        [{ ...base, maxActiveRuns: LIMITS.maxMaxActiveRuns + 1 }, 'maxActiveRuns'],
        [{ ...base, mode: 'again' as 'rerun' }, 'mode'],
        [{ ...base, to: minutes(LIMITS.backfillConfirmSlots + 1) }, 'confirm'],
        [{ ...base, to: minutes(LIMITS.maxBackfillSlots + 1), confirm: true }, 'to'],
        [{ ...base, from: new Date(FROM.getTime() + 1), to: new Date(FROM.getTime() + 1000) }, 'to'],
        [{ ...base, requestedBy: '' }, 'requestedBy'],
      ];
      for (const [request, field] of refusals) {
        const err = await refusedWith(c.store.createBackfill(request), 'INVALID_INPUT');
        expect(err.details.field, err.message).toBe(field);
      }
      await refusedWith(c.store.createBackfill({ ...base, dagId: parseDagId(unique('backfill-missing')) }), 'NOT_FOUND');
      expect(await c.store.listBackfills({ dagId })).toEqual([]);
      // Confirmed, a range above the confirmation limit is accepted.
      const big = await c.store.createBackfill({ ...base, to: minutes(LIMITS.backfillConfirmSlots + 1), confirm: true });
      expect(big.totalSlots).toBe(LIMITS.backfillConfirmSlots + 1);
    });

    it('advanceBackfill creates backfill runs up to the max active runs, skips slots that have one, and resumes where it ended', async () => {
      const { token, dagId } = await minuteDag();
      const first = await c.store.createBackfill({ dagId, from: minutes(2), to: minutes(4), maxActiveRuns: 5, requestedBy: 'ops' });
      const firstStep = await c.store.advanceBackfill(token, step(first, [2, 3], null));
      expect(firstStep?.created.map((r) => [r.trigger, r.state, r.scheduledAt.toISOString()])).toEqual([
        ['backfill', 'queued', minutes(2).toISOString()],
        ['backfill', 'queued', minutes(3).toISOString()],
      ]);
      expect(firstStep?.backfill).toMatchObject({ createdRuns: 2, skippedSlots: 0, activeRuns: 2, nextSlotAt: null, state: 'running' });

      // A second backfill over minutes 0-5 finds minutes 2 and 3 taken.
      let b = await c.store.createBackfill({ dagId, from: FROM, to: minutes(6), maxActiveRuns: 3, requestedBy: 'ops' });
      const a1 = await c.store.advanceBackfill(token, step(b, [0, 1, 2], 3));
      expect(a1?.created.map((r) => r.scheduledAt.toISOString())).toEqual([minutes(0), minutes(1)].map((d) => d.toISOString()));
      b = a1!.backfill;
      expect(b).toMatchObject({ createdRuns: 2, skippedSlots: 1, activeRuns: 2 });
      expect(b.nextSlotAt?.toISOString()).toBe(minutes(3).toISOString());
      // Two of its runs are unfinished and its limit is 3: a step of two more is refused whole.
      expect(await c.store.advanceBackfill(token, step(b, [3, 4], 5))).toBeNull();
      // So is a step from a next slot it is not at, or with slots outside what is left of its range.
      expect(await c.store.advanceBackfill(token, { ...step(b, [4], 5), expectedNextSlotAt: minutes(4) })).toBeNull();
      expect(await c.store.advanceBackfill(token, step(b, [1], 5))).toBeNull();
      expect(await c.store.advanceBackfill(token, step(b, [6], null))).toBeNull();
      expect(await c.store.getBackfill(b.id)).toMatchObject({ createdRuns: 2, skippedSlots: 1 });
      // Minute 3 belongs to the first backfill: skipped, and the next step goes on from 4.
      const a2 = await c.store.advanceBackfill(token, step(b, [3], 4));
      expect(a2?.created).toEqual([]);
      const a3 = await c.store.advanceBackfill(token, step(a2!.backfill, [4], 5));
      expect(a3?.created).toHaveLength(1);
      expect(a3?.backfill).toMatchObject({ createdRuns: 3, skippedSlots: 2, activeRuns: 3 });
      const runs = await c.store.listRuns({ dagId, limit: 100 });
      expect(runs).toHaveLength(5);
      expect(new Set(runs.map((r) => r.scheduledAt.getTime())).size).toBe(5);
    });

    it('advanceBackfill marks a backfill done once every slot is written and every run ended', async () => {
      const { token, dagId } = await minuteDag();
      let b = await c.store.createBackfill({ dagId, from: FROM, to: minutes(1), maxActiveRuns: 1, requestedBy: 'ops' });
      const advanced = await c.store.advanceBackfill(token, step(b, [0], null));
      b = advanced!.backfill;
      const run = advanced!.created[0]!;
      // A run still unfinished keeps it running.
      expect((await c.store.advanceBackfill(token, step(b, [], null)))?.backfill.state).toBe('running');
      const jobs = await startRun(c.store, token, run.id, newJobs());
      // A run finishes once none of its jobs is open.
      await markUpstreamFailed(
        c.store,
        token,
        jobs.map((j) => j.id),
      );
      expect(await finishRun(c.store, token, run.id, 'failed')).toBe(true);
      const done = await c.store.advanceBackfill(token, step(b, [], null));
      expect(done?.backfill).toMatchObject({ state: 'done', activeRuns: 0, finishedRuns: 1, createdRuns: 1 });
      expect(done?.backfill.endedAt).not.toBeNull();
      expect(await c.store.openBackfills([token])).toEqual([]);
      expect(await c.store.advanceBackfill(token, step(b, [], null))).toBeNull();
    });

    it('in rerun mode a step takes over a slot whose run ended, with a pending clear of all its tasks, and counts it unfinished', async () => {
      const { token, dagId } = await minuteDag();
      const first = await c.store.createBackfill({ dagId, from: minutes(1), to: minutes(3), maxActiveRuns: 5, requestedBy: 'ops' });
      const made = (await c.store.advanceBackfill(token, step(first, [1, 2], null)))!.created;
      // Minute 1's run ended; minute 2's is still queued.
      const ended = made[0]!;
      const jobs = await startRun(c.store, token, ended.id, newJobs());
      await markUpstreamFailed(
        c.store,
        token,
        jobs.map((j) => j.id),
      );
      expect(await finishRun(c.store, token, ended.id, 'failed')).toBe(true);
      const again = await c.store.createBackfill({ dagId, from: FROM, to: minutes(3), maxActiveRuns: 3, mode: 'rerun', requestedBy: 'ops' });
      const out = await c.store.advanceBackfill(token, step(again, [0, 1, 2], null));
      expect(out?.created.map((r) => r.scheduledAt.toISOString())).toEqual([FROM.toISOString()]);
      expect(out?.rerun).toEqual([ended.id]);
      expect(out?.backfill).toMatchObject({ createdRuns: 1, rerunRuns: 1, skippedSlots: 1, activeRuns: 2, finishedRuns: 0 });
      const pending = (await c.store.pendingRunActions(token)).filter((a) => a.runId === ended.id);
      expect(pending).toMatchObject([{ kind: 'clear', taskIds: ['a', 'b'], requestedBy: `backfill ${again.id}` }]);
    });

    it("gives a backfill's runs the defaults of the params their DAG declares", async () => {
      const { token, dagId } = await c.leadFreshShard(LONG_TTL_MS, 'backfill-params');
      await c.store.putDag(spec(dagId, { schedule: everyMinute, params: { REGION: { type: 'string', default: 'eu' }, LIMIT: { type: 'integer' } } }), SHARD_COUNT);
      const b = await c.store.createBackfill({ dagId, from: FROM, to: minutes(1), requestedBy: 'ops' });
      const out = await c.store.advanceBackfill(token, step(b, [0], null));
      expect(out?.created.map((r) => r.params)).toEqual([{ REGION: 'eu' }]);
    });

    it('a deposed leader advances and settles nothing', async () => {
      const { token, dagId } = await minuteDag();
      const b = await c.store.createBackfill({ dagId, from: FROM, to: minutes(2), requestedBy: 'ops' });
      await c.store.releaseShard(token);
      const taken = await c.store.acquireShard({ shard: token.shard, nodeId: unique('node'), ttlMs: LONG_TTL_MS });
      await refusedWith(c.store.advanceBackfill(token, step(b, [0], 1)), 'DEPOSED_LEADER');
      expect(await c.store.getBackfill(b.id)).toMatchObject({ createdRuns: 0, nextSlotAt: FROM });
      expect(await c.store.listRuns({ dagId, limit: 10 })).toEqual([]);
      await c.store.cancelBackfill(b.id);
      await refusedWith(c.store.settleBackfill(token, b.id), 'DEPOSED_LEADER');
      expect((await c.store.settleBackfill(taken!.token, b.id))?.backfill.endedAt).not.toBeNull();
    });

    it('cancelBackfill stops its runs being created; settling cancels its queued runs and names its running ones', async () => {
      const { token, dagId } = await minuteDag();
      const b = await c.store.createBackfill({ dagId, from: FROM, to: minutes(10), maxActiveRuns: 3, requestedBy: 'ops' });
      const advanced = await c.store.advanceBackfill(token, step(b, [0, 1, 2], 3));
      const [running, ...queued] = advanced!.created;
      await startRun(c.store, token, running!.id, newJobs());
      const seen: StoreNotice[] = [];
      const unsubscribe = await c.store.subscribe((n) => seen.push(n));
      try {
        const cancelled = await c.store.cancelBackfill(b.id);
        expect(cancelled).toMatchObject({ state: 'cancelled', endedAt: null });
        await eventually(() => seen.some((n) => n.kind === 'backfill-changed' && n.backfillId === b.id));
      } finally {
        await unsubscribe();
      }
      expect(await c.store.advanceBackfill(token, step(advanced!.backfill, [3], 4))).toBeNull();
      // Still open: its leader has queued runs to cancel.
      expect((await c.store.openBackfills([token])).map((o) => o.id)).toEqual([b.id]);
      const settled = await c.store.settleBackfill(token, b.id);
      expect(settled?.cancelledRunIds).toEqual(queued.map((r) => r.id));
      expect(settled?.runningRunIds).toEqual([running!.id]);
      expect(settled?.backfill.endedAt).not.toBeNull();
      for (const run of queued) expect(await c.store.getRun(run.id)).toMatchObject({ state: 'cancelled' });
      expect((await c.store.getRun(running!.id)).state).toBe('running');
      // The running run is left to its leader to cancel, as an operator action stored with the settle.
      const pending = (await c.store.pendingRunActions(token)).filter((a) => a.runId === running!.id);
      expect(pending).toMatchObject([{ kind: 'cancel', taskIds: [], requestedBy: `backfill ${b.id}`, reason: 'its backfill was cancelled' }]);
      expect(await c.store.openBackfills([token])).toEqual([]);
      expect(await c.store.settleBackfill(token, b.id)).toBeNull();
      // Cancelling again changes nothing.
      expect((await c.store.cancelBackfill(b.id)).state).toBe('cancelled');
      await refusedWith(c.store.cancelBackfill(parseBackfillId('999999999')), 'NOT_FOUND');
    });
  });
}
