import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventRow, JobRow } from '@fenceline/core';
import { fairShare, runTimeline, workersSnapshot, type JobTimeline, type TimelineInterval } from '@fenceline/db/console';
import { eventually, loadExample, startFixture, type Fixture } from './support/cluster-fixture';
import { parseDagId } from '@fenceline/core';

const SHARDS = 4;
const BACKOFF_MS = 1000;
/**
 * Events are written in batches this far apart, so an event stamped when its batch is
 * written would be off by up to two seconds: far more than the tolerance below.
 */
const FLUSH_MS = 2000;
/** How far a node's stamp may be from the store's own time for the same moment. */
const STAMP_TOLERANCE_MS = 100;

const ms = (d: Date | string | null | undefined): number => (d ? new Date(d).getTime() : NaN);

function intervalsOf(t: JobTimeline, kind: TimelineInterval['kind']): TimelineInterval[] {
  return t.intervals.filter((i) => i.kind === kind);
}

describe('cluster: the run timeline', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 2, workers: 2, env: { FENCELINE_EVENT_FLUSH_INTERVAL_MS: String(FLUSH_MS), FENCELINE_CAP_PERCENT: '100' } });
  });
  afterAll(async () => f?.stop());

  it('places every interval by the store times of its job and events, a failed attempt and its backoff included', async () => {
    const spec = await loadExample('flaky-retry.yaml');
    spec.id = 'timeline-flaky';
    // The middle task fails once, then succeeds after one backoff.
    spec.tasks = spec.tasks.map((t) => (t.id === 'call-flaky-service' ? { ...t, config: { succeedOnAttempt: 2 }, retryBackoffMs: BACKOFF_MS } : t));
    await f.store.putDag(spec, SHARDS);
    const run = await f.store.triggerRun(parseDagId(spec.id));
    await eventually('the run to succeed', async () => (await f.store.getRun(run.id)).state === 'succeeded', 60_000);
    // Events arrive a flush later than the run's end: wait for each job's success to be logged.
    const events = await eventually(
      'every job:succeeded event of the run',
      async () => {
        const list = await f.store.listEvents({ runId: run.id, limit: 1000 });
        return list.filter((e) => e.type === 'job:succeeded').length === 3 ? list : null;
      },
      3 * FLUSH_MS + 5000,
    );
    const jobs = new Map((await f.store.listJobs(run.id)).map((j) => [j.taskId, j]));
    const timeline = await runTimeline(f.store.db, run.id, { capFraction: 1, liveWindowMs: 15_000 });
    const byTask = new Map(timeline.jobs.map((j) => [j.job.taskId, j]));
    const eventsOf = (job: JobRow, type: string): EventRow[] => events.filter((e) => e.jobId === job.id && e.type === type);

    // Each event is stamped when it happened: beside the time the store wrote in the job's row.
    for (const job of jobs.values()) {
      const [succeeded] = eventsOf(job, 'job:succeeded');
      expect(
        Math.abs(ms(succeeded!.at) - ms(job.endedAt)),
        `${job.taskId}: job:succeeded at ${succeeded!.at.toISOString()}, ended ${job.endedAt?.toISOString()}`,
      ).toBeLessThanOrEqual(STAMP_TOLERANCE_MS);
      const grants = eventsOf(job, 'lease:granted');
      expect(Math.abs(ms(grants.at(-1)!.at) - ms(job.leasedAt)), `${job.taskId}: last grant`).toBeLessThanOrEqual(STAMP_TOLERANCE_MS);
    }
    const flaky = jobs.get('call-flaky-service')!;
    const [retrying] = eventsOf(flaky, 'job:retrying');
    expect(retrying, 'the flaky task failed once').toBeDefined();
    // The retry made the job ready again: its ready_at is the store's time of the failure.
    expect(Math.abs(ms(retrying!.at) - ms(flaky.readyAt))).toBeLessThanOrEqual(STAMP_TOLERANCE_MS);

    // Every job's intervals follow one another without gaps or overlaps, each of some width.
    for (const t of timeline.jobs) {
      expect(t.intervals.length, t.job.taskId).toBeGreaterThan(0);
      for (const [k, i] of t.intervals.entries()) {
        expect(ms(i.to), `${t.job.taskId} ${i.kind}`).toBeGreaterThanOrEqual(ms(i.from));
        expect(i.open).toBe(false);
        if (k > 0) expect(ms(i.from), `${t.job.taskId}: ${i.kind} starts where ${t.intervals[k - 1]!.kind} ended`).toBe(ms(t.intervals[k - 1]!.to));
      }
      // Each job's last attempt runs from the store's grant to the store's end.
      const last = intervalsOf(t, 'attempt').at(-1)!;
      expect(ms(last.from)).toBe(ms(t.job.leasedAt));
      expect(ms(last.to)).toBe(ms(t.job.endedAt));
      expect(last.outcome).toBe('succeeded');
    }

    // The flaky task: ready once its upstream ended, a failed attempt, the backoff, a wait, the success.
    const ft = byTask.get('call-flaky-service')!;
    expect(ft.intervals.map((i) => i.kind)).toEqual(['dependencies', 'ready', 'attempt', 'backoff', 'ready', 'attempt']);
    const [deps, , failed, backoff, , succeeded] = ft.intervals as [TimelineInterval, TimelineInterval, TimelineInterval, TimelineInterval, TimelineInterval, TimelineInterval];
    expect(ms(deps.to)).toBe(ms(jobs.get('prepare')!.endedAt));
    expect(failed.outcome).toBe('retrying');
    expect(failed.attempt).toBe(1);
    const firstGrant = eventsOf(flaky, 'lease:granted')[0]!;
    expect(ms(failed.from)).toBe(ms(firstGrant.at));
    expect(ms(failed.to)).toBe(ms(flaky.readyAt));
    expect(ms(failed.to) - ms(failed.from), 'the failed attempt has a width').toBeGreaterThan(0);
    expect(ms(backoff.from)).toBe(ms(flaky.readyAt));
    expect(ms(backoff.to)).toBe(ms(String(retrying!.data.nextAttemptAt)));
    expect(ms(backoff.to) - ms(backoff.from)).toBe(BACKOFF_MS);
    expect(succeeded.attempt).toBe(2);
    expect(ms(succeeded.from)).toBeGreaterThanOrEqual(ms(backoff.to));

    // The task downstream of it became ready only when it had succeeded, by the store's times.
    const report = byTask.get('report')!;
    expect(report.intervals[0]!.kind).toBe('dependencies');
    expect(ms(report.intervals[0]!.to)).toBe(ms(report.job.readyAt));
    expect(ms(report.job.readyAt)).toBeGreaterThanOrEqual(ms(flaky.endedAt));
    const reportReady = intervalsOf(report, 'ready')[0]!;
    expect(ms(reportReady.to)).toBe(ms(report.job.leasedAt));
  });

  it('says why a ready job waits when no live worker offers its pool, labels or type, or its limit is taken', async () => {
    await f.store.setResourceLimit({ name: 'timeline-slot', capacity: 1 });
    const spec = {
      id: 'timeline-unrouted',
      tasks: [
        { id: 'on-gpu', type: 'noop', config: {}, pool: 'gpu' },
        { id: 'in-eu', type: 'noop', config: {}, labels: ['region=eu'] },
        // Both sleep, so whichever is leased first still holds the one unit while the other is read.
        { id: 'holder', type: 'sleep', config: { durationMs: 20_000 }, resources: { 'timeline-slot': 1 } },
        { id: 'second', type: 'sleep', config: { durationMs: 20_000 }, resources: { 'timeline-slot': 1 } },
      ],
    };
    await f.store.putDag(spec as Parameters<typeof f.store.putDag>[0], SHARDS);
    const run = await f.store.triggerRun(parseDagId(spec.id));
    const reasons = await eventually(
      'the unroutable jobs to wait, ready, with their reasons',
      async () => {
        const timeline = await runTimeline(f.store.db, run.id, { capFraction: 1, liveWindowMs: 15_000 });
        const byTask = new Map(timeline.jobs.map((j) => [j.job.taskId, j]));
        const gpu = byTask.get('on-gpu')!;
        const eu = byTask.get('in-eu')!;
        const limited = [byTask.get('holder')!, byTask.get('second')!];
        const waiting = limited.find((j) => j.job.state === 'ready');
        const leased = limited.find((j) => j.job.state === 'leased');
        if (gpu.job.state !== 'ready' || eu.job.state !== 'ready' || !waiting || !leased) return null;
        return { gpu: gpu.waitingReason, eu: eu.waitingReason, limited: waiting.waitingReason };
      },
      30_000,
    );
    expect(reasons.gpu).toBe('waiting for a worker: no live worker in pool `gpu`');
    expect(reasons.eu).toBe('waiting for a worker: no live worker in pool `default` has labels region=eu');
    expect(reasons.limited).toBe('waiting for a resource limit: limit `timeline-slot` has 0 of 1 units free, the task needs 1');

    // The Fair share page counts the same jobs per DAG and pool, and the Workers page shows the pool of each live worker.
    const share = await fairShare(f.store.db, { capFraction: 1, liveWindowMs: 15_000 });
    const rows = share.dags.filter((d) => d.dagId === spec.id).map((d) => [d.pool, d.held, d.ready, d.lent]);
    expect(rows).toEqual(
      expect.arrayContaining([
        ['gpu', 0, 1, 0],
        ['default', 1, 2, 0],
      ]),
    );
    expect(share.pools.map((p) => [p.pool, p.liveWorkers])).toEqual([
      ['default', 2],
      ['gpu', 0],
    ]);
    const workers = await workersSnapshot(f.store.db, { liveWindowMs: 15_000, recentMs: 60_000 });
    expect(workers.workers.filter((w) => w.live).map((w) => [w.offer.pool, w.offerReported])).toEqual([
      ['default', true],
      ['default', true],
    ]);
  });
});
