import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBackfillId, parseDagId, parseRunId, type BackfillId, type BackfillRow, type RunRow } from '@fenceline/core';
import { benchSpec, seedBenchDags } from '@fenceline/db/bench-support';
import { runCli } from './support/cli-process';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);
const SHARD_TTL_MS = Number(FAST_ENV.FENCELINE_SHARD_LEASE_TTL_MS);
const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;

/** Every run of the DAG with its slot in [from, to). */
async function runsIn(f: Fixture, b: BackfillRow): Promise<RunRow[]> {
  const runs = await f.store.listRuns({ dagId: b.dagId, limit: 1_000 });
  return runs.filter((r) => r.scheduledAt >= b.fromAt && r.scheduledAt < b.toAt);
}

describe('backfill: two schedulers and two workers on PostgreSQL', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 2, workers: 2 });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('makes exactly 720 runs for 30 days of an hourly DAG while its own schedule catches up the same slots, through a leader crash', async () => {
    const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    const from = new Date(to.getTime() - 30 * DAY_MS);
    // Stored as if 30 days ago (around the API, as an older DAG would be): its schedule is
    // due since `from`, and catch-up `all` over 15 days makes the tick create the second
    // half of the range itself, in the same seconds as the backfill works through it.
    const spec = {
      ...benchSpec('hourly-backfill', { tasks: [{ id: 'only', type: 'noop' }], schedule: { kind: 'interval', everyMs: HOUR_MS }, catchup: 'all' }),
      catchup: { policy: 'all' as const, windowMs: 15 * DAY_MS },
      maxActiveRuns: 60,
      capFraction: 1,
    };
    const dagId = parseDagId(spec.id);
    const [, backfill] = await Promise.all([
      seedBenchDags(f.store.db, [{ id: spec.id, nextRunAt: from, spec }], SHARDS),
      // The DAG must exist for the backfill; the seed commits first, the tick follows within a tick.
      eventually('the DAG to exist', () => f.store.getDag(dagId), 5_000, 20).then(() =>
        f.store.createBackfill({ dagId, from, to, maxActiveRuns: 40, confirm: true, requestedBy: 'test' }),
      ),
    ]);
    expect(backfill).toMatchObject({ totalSlots: 720, state: 'running' });

    // Part way through, the shard's leader dies; the standby takes the shard when its lease runs out.
    await eventually('a part of the backfill', async () => (await f.store.getBackfill(backfill.id)).createdRuns >= 60, 60_000, 50);
    const shard = (await f.store.getDag(dagId)).shard;
    const leader = (await f.store.listShards()).find((s) => s.shard === shard)!.holder!;
    f.cluster.signal(leader, 'SIGKILL');
    const standby = leader === 'scheduler-1' ? 'scheduler-2' : 'scheduler-1';
    await eventually('the standby to lead the shard', async () => (await f.store.listShards()).find((s) => s.shard === shard)?.holder === standby, SHARD_TTL_MS * 5, 50);

    const done = await eventually(
      'the backfill to finish',
      async () => {
        const row = await f.store.getBackfill(backfill.id);
        return row.state === 'done' ? row : null;
      },
      150_000,
      250,
    );
    // Done means the backfill's own runs ended; the schedule's runs of the range end on their own.
    const runs = await eventually(
      'every run of the range to succeed',
      async () => {
        const list = await runsIn(f, backfill);
        return list.every((r) => r.state === 'succeeded') ? list : null;
      },
      60_000,
      250,
    );
    expect(runs).toHaveLength(720);
    expect(new Set(runs.map((r) => r.scheduledAt.getTime())).size).toBe(720);
    const byBackfill = runs.filter((r) => r.trigger === 'backfill').length;
    const bySchedule = runs.filter((r) => r.trigger === 'schedule').length;
    expect(byBackfill + bySchedule).toBe(720);
    // Both made runs of the range: the unique (dag, scheduled_at) kept them to one per slot.
    expect(byBackfill).toBeGreaterThanOrEqual(360);
    expect(bySchedule).toBeGreaterThan(0);
    expect(done).toMatchObject({ createdRuns: byBackfill, skippedSlots: bySchedule, activeRuns: 0, finishedRuns: byBackfill });
    const events = await eventually(
      'the backfill:done event',
      async () => {
        const list = await f.store.listEvents({ type: 'backfill:done', limit: 10 });
        return list.length > 0 ? list : null;
      },
      10_000,
    );
    expect(events[0]!.data).toMatchObject({ backfillId: backfill.id, totalSlots: 720 });
  });

  it('cancelled, it creates no more runs, its queued runs end cancelled and its running run is cancelled', async () => {
    // Each run sleeps a minute, so the one that has started is still running at the cancel.
    const base = benchSpec('hourly-cancel', { tasks: [{ id: 'only', type: 'sleep' }], schedule: { kind: 'interval', everyMs: HOUR_MS } });
    const spec = { ...base, maxActiveRuns: 1, tasks: base.tasks.map((t) => ({ ...t, config: { durationMs: 60_000 } })) };
    await seedBenchDags(f.store.db, [{ id: spec.id, nextRunAt: null, spec }], SHARDS);
    const dagId = parseDagId(spec.id);
    const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    // The DAG runs one at a time, so most of the backfill's ten unfinished runs wait queued.
    const b = await f.store.createBackfill({ dagId, from: new Date(to.getTime() - 10 * DAY_MS), to, maxActiveRuns: 10, requestedBy: 'test' });
    await eventually('ten runs of the backfill', async () => (await f.store.getBackfill(b.id)).activeRuns === 10, 30_000, 50);
    await f.store.cancelBackfill(b.id);
    const settled = await eventually(
      'the backfill to be settled',
      async () => {
        const row = await f.store.getBackfill(b.id);
        return row.endedAt !== null ? row : null;
      },
      30_000,
      50,
    );
    expect(settled.state).toBe('cancelled');
    const runs = await f.store.listRuns({ dagId, limit: 1_000 });
    expect(runs.filter((r) => r.state === 'cancelled').length).toBeGreaterThan(0);
    expect(runs.every((r) => r.state !== 'queued')).toBe(true);
    // The run that was running is cancelled by its leader as an operator action.
    await eventually('no run of the backfill still running', async () => (await f.store.listRuns({ dagId, limit: 1_000 })).every((r) => r.state === 'cancelled'), 30_000, 100);
    await eventually(
      'the cancel in the event log',
      async () => (await f.store.listEvents({ type: 'run:action', limit: 100 })).some((e) => e.data.by === `backfill ${b.id}`),
      10_000,
      100,
    );
    // Nothing more is created after the cancel.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect((await f.store.getBackfill(b.id)).createdRuns).toBe(settled.createdRuns);
    expect(settled.createdRuns).toBeLessThan(240);
  });

  it('through the CLI: refuses a bad range, asks for --yes above the limit, prints its progress until done, lists and cancels', async () => {
    const spec = { ...benchSpec('cli-backfill', { tasks: [{ id: 'only', type: 'noop' }], schedule: { kind: 'interval', everyMs: HOUR_MS } }), maxActiveRuns: 20, capFraction: 1 };
    await seedBenchDags(f.store.db, [{ id: spec.id, nextRunAt: null, spec }], SHARDS);
    const dagId = parseDagId(spec.id);
    const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    const iso = (daysBack: number) => new Date(to.getTime() - daysBack * DAY_MS).toISOString();

    const bad = await runCli(f.databaseUrl, 'backfill', spec.id, '--from', 'yesterday', '--to', to.toISOString());
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('INVALID_INPUT: from: must be an instant such as');
    const badMode = await runCli(f.databaseUrl, 'backfill', spec.id, '--from', iso(1), '--to', to.toISOString(), '--mode', 'again');
    expect(badMode.code).toBe(1);
    expect(badMode.stderr).toContain('INVALID_INPUT: mode: must be one of skip, rerun');
    const big = await runCli(f.databaseUrl, 'backfill', spec.id, '--from', iso(30), '--to', to.toISOString());
    expect(big.code).toBe(1);
    expect(big.stderr).toContain('720 slots');
    expect(big.stderr).toContain('--yes');
    expect(await f.store.listBackfills({ dagId })).toEqual([]);

    const run = await runCli(f.databaseUrl, 'backfill', spec.id, '--from', iso(30), '--to', to.toISOString(), '--max-active', '20', '--yes');
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    const lines = run.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^backfill \d+ of cli-backfill: 720 slots from .* at most 20 unfinished runs$/);
    expect(lines[lines.length - 1]).toMatch(/\[#{30}\] 100% 720\/720 slots: 720 runs created, 0 skipped, 0 unfinished; done$/);
    // A line per change of progress: the bar grew while it ran.
    expect(lines.length).toBeGreaterThan(3);
    const [b] = await f.store.listBackfills({ dagId });
    expect(b).toMatchObject({ state: 'done', createdRuns: 720 });

    const status = await runCli(f.databaseUrl, 'backfill', 'status', b!.id);
    expect(status.stdout).toContain('720/720 slots');
    const list = await runCli(f.databaseUrl, 'backfill', 'list', spec.id);
    expect(list.stdout).toContain('720/720');
    const again = await runCli(f.databaseUrl, 'backfill', 'cancel', b!.id);
    expect(again.stdout).toContain(`backfill ${b!.id} is already done`);

    // Started without waiting, then cancelled: both are in the audit log.
    const slow = await runCli(f.databaseUrl, 'backfill', spec.id, '--from', iso(60), '--to', iso(31), '--max-active', '1', '--yes', '--no-wait');
    expect(slow.code).toBe(0);
    const id = /^backfill (\d+) /.exec(slow.stdout)![1]!;
    const cancel = await runCli(f.databaseUrl, 'backfill', 'cancel', id);
    expect(cancel.stdout).toContain(`backfill ${id} cancelled`);
    const audit = await f.store.listAudit({ dagId });
    expect(audit.map((a) => [a.action, a.target, a.actorKind])).toEqual(
      expect.arrayContaining([
        ['backfill.created', b!.id, 'cli'],
        ['backfill.created', id, 'cli'],
        ['backfill.cancelled', id, 'cli'],
      ]),
    );
    await eventually('the cancelled backfill to be settled', async () => (await f.store.getBackfill(parseBackfillId(id))).endedAt !== null, 30_000, 100);
  });

  it('in rerun mode, runs again every slot whose run has ended, under higher fences, and creates the missing ones', async () => {
    const spec = { ...benchSpec('hourly-rerun', { tasks: [{ id: 'only', type: 'noop' }], schedule: { kind: 'interval', everyMs: HOUR_MS } }), maxActiveRuns: 10 };
    await seedBenchDags(f.store.db, [{ id: spec.id, nextRunAt: null, spec }], SHARDS);
    const dagId = parseDagId(spec.id);
    const to = new Date(Math.floor(Date.now() / HOUR_MS) * HOUR_MS);
    const doneOf = async (id: BackfillId) =>
      eventually(`backfill ${id} to be done`, async () => ((await f.store.getBackfill(id)).state === 'done' ? f.store.getBackfill(id) : null), 60_000, 100);
    // Three slots run once, by a backfill that skips nothing.
    const first = await f.store.createBackfill({ dagId, from: new Date(to.getTime() - 3 * HOUR_MS), to, maxActiveRuns: 3, requestedBy: 'test' });
    await doneOf(first.id);
    const before = new Map((await f.store.listRuns({ dagId, limit: 10 })).map((r) => [r.scheduledAt.getTime(), r]));
    const fences = new Map<string, number>();
    for (const run of before.values()) fences.set(run.id, (await f.store.listJobs(run.id))[0]!.fence);
    // Five slots in rerun mode: the three that ran run again, two are new.
    const again = await f.store.createBackfill({ dagId, from: new Date(to.getTime() - 5 * HOUR_MS), to, maxActiveRuns: 2, mode: 'rerun', requestedBy: 'test' });
    const done = await doneOf(again.id);
    expect(done).toMatchObject({ createdRuns: 2, rerunRuns: 3, skippedSlots: 0, totalSlots: 5, finishedRuns: 5 });
    const runs = await f.store.listRuns({ dagId, limit: 10 });
    expect(runs).toHaveLength(5);
    expect(runs.every((r) => r.state === 'succeeded')).toBe(true);
    for (const [runId, fence] of fences) {
      const [job] = await f.store.listJobs(parseRunId(runId));
      expect(job!.fence).toBeGreaterThan(fence);
      expect((await f.store.getResult(job!.id))?.fence).toBe(job!.fence);
    }
    const cleared = await Promise.all([...fences.keys()].map((id) => f.store.listRunActions(parseRunId(id))));
    expect(cleared.map((list) => list.map((a) => [a.kind, a.requestedBy, a.state]))).toEqual([...fences.keys()].map(() => [['clear', `backfill ${again.id}`, 'applied']]));
  });
});
