import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseRunId, parseDagId, LIMITS, type JobRow, type RunRow } from '@fenceline/core';
import { benchSpec, seedBenchDags } from '@fenceline/db/bench-support';
import { sleep } from '../tools/start/cluster';
import { eventually, FAST_ENV, loadExample, startFixture, type Fixture } from './support/cluster-fixture';

const TTL_MS = Number(FAST_ENV.FENCELINE_LEASE_TTL_MS);
const SHARD_TTL_MS = Number(FAST_ENV.FENCELINE_SHARD_LEASE_TTL_MS);
const TICK_MS = Number(FAST_ENV.FENCELINE_TICK_INTERVAL_MS);
const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

async function runSettled(f: Fixture, runId: string): Promise<RunRow | null> {
  const run = await f.store.getRun(parseRunId(runId));
  return run.state === 'succeeded' || run.state === 'failed' ? run : null;
}

describe('cluster: two schedulers and three workers', () => {
  let f: Fixture;
  beforeAll(async () => {
    // The cap is lifted so the 200-part fan-out finishes quickly; fair share has its own tests.
    f = await startFixture({ schedulers: 2, workers: 3, workerSlots: 8, env: { FENCELINE_CAP_PERCENT: '100' } });
  });
  afterAll(async () => f?.stop());

  it('runs the example DAGs to success, each job exactly once', async () => {
    const examples = ['etl-cron.yaml', 'flaky-retry.yaml', 'wide-fanout.json'];
    const runs: RunRow[] = [];
    for (const file of examples) {
      const spec = await loadExample(file);
      await f.store.putDag(spec, SHARDS);
      runs.push(await f.store.triggerRun(parseDagId(spec.id)));
    }
    for (const run of runs) {
      const settled = await eventually(`run ${run.id} of ${run.dagId} to finish`, () => runSettled(f, run.id), 120_000);
      expect(settled.state, `${run.dagId} ended ${settled.state}`).toBe('succeeded');
    }
    for (const run of runs) {
      const jobs = await f.store.listJobs(run.id);
      expect(jobs.length).toBeGreaterThan(0);
      for (const job of jobs) {
        expect(job.state).toBe('succeeded');
        const result = await f.store.getResult(job.id);
        // The result store holds the accepted write, and it carries the fence of the last lease.
        expect(result?.outcome).toBe('succeeded');
        expect(result?.fence).toBe(job.fence);
      }
    }
    // The flaky task failed twice, retried with backoff, and succeeded on its third attempt.
    const flakyJobs = await f.store.listJobs(runs[1]!.id);
    const flaky = flakyJobs.find((j) => j.taskId === 'call-flaky-service')!;
    expect(flaky.attempt).toBe(3);
    expect(flaky.fence).toBeGreaterThanOrEqual(3);
  });

  it('fails a run that can never start, with its reason, and runs everything else', async () => {
    // A version with more tasks than a run may hold, written around the API (as one stored
    // before the limit was lowered would be): the store refuses to start its runs.
    const tasks = Array.from({ length: LIMITS.maxTasksPerDag + 1 }, (_, k) => ({ id: `t${k}`, type: 'noop' }));
    await seedBenchDags(f.store.db, [{ id: 'too-wide', nextRunAt: null, spec: benchSpec('too-wide', { tasks }) }], SHARDS);
    await f.store.putDag({ id: 'beside-too-wide', tasks: [{ id: 'only', type: 'noop' }] }, SHARDS);
    const [first, second, beside] = [
      await f.store.triggerRun(parseDagId('too-wide')),
      await f.store.triggerRun(parseDagId('too-wide')),
      await f.store.triggerRun(parseDagId('beside-too-wide')),
    ];
    for (const run of [first, second]) {
      const settled = await eventually(`run ${run.id} to fail`, () => runSettled(f, run.id), 60_000);
      expect(settled).toMatchObject({ state: 'failed', startedAt: null });
      expect(await f.store.listJobs(run.id)).toEqual([]);
      const events = await eventually(
        `the failure of run ${run.id} to be logged`,
        async () => {
          const list = await f.store.listEvents({ runId: run.id, type: 'run:finished' });
          return list.length > 0 ? list : null;
        },
        10_000,
      );
      expect(events[0]!.data).toMatchObject({ state: 'failed', reason: expect.stringContaining(`at most ${LIMITS.maxTasksPerDag}`) });
    }
    expect((await eventually('the run beside them to finish', () => runSettled(f, beside.id), 60_000)).state).toBe('succeeded');

    // The same on a schedule: a tick creates both DAGs' runs in one write, which must not
    // try to start the one that cannot start (the store would refuse the whole write).
    const schedule = { kind: 'interval', everyMs: 3_600_000 };
    const due = new Date(Date.now() - 1_000);
    await seedBenchDags(
      f.store.db,
      [
        { id: 'too-wide-scheduled', nextRunAt: due, spec: benchSpec('too-wide-scheduled', { tasks, schedule }) },
        { id: 'beside-too-wide-scheduled', nextRunAt: due, spec: benchSpec('beside-too-wide-scheduled', { tasks: [{ id: 'only', type: 'noop' }], schedule }) },
      ],
      SHARDS,
    );
    const scheduledRun = async (dagId: string) =>
      (await f.store.listRuns({ dagId: parseDagId(dagId), limit: 10 })).find((r) => r.state === 'succeeded' || r.state === 'failed') ?? null;
    expect(await eventually('the scheduled run that cannot start to fail', () => scheduledRun('too-wide-scheduled'), 60_000)).toMatchObject({
      state: 'failed',
      trigger: 'schedule',
      startedAt: null,
    });
    expect(await eventually('the scheduled run beside it to succeed', () => scheduledRun('beside-too-wide-scheduled'), 60_000)).toMatchObject({
      state: 'succeeded',
      trigger: 'schedule',
    });
  });

  it('creates runs from a schedule on its own', async () => {
    await f.store.putDag(
      { id: 'every-two-seconds', schedule: { kind: 'interval', everyMs: 2000 }, catchup: { policy: 'all' }, maxActiveRuns: 3, tasks: [{ id: 'only', type: 'noop' }] },
      SHARDS,
    );
    const done = await eventually(
      'two scheduled runs to succeed',
      async () => {
        const runs = await f.store.listRuns({ dagId: parseDagId('every-two-seconds'), limit: 50 });
        const ok = runs.filter((r) => r.state === 'succeeded' && r.trigger === 'schedule');
        return ok.length >= 2 ? ok : null;
      },
      30_000,
    );
    for (const run of done) expect(run.scheduledAt.getTime() % 2000).toBe(0);
  });
});

describe('cluster: a worker paused past its lease', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 2, workerSlots: 1 });
  });
  afterAll(async () => f?.stop());

  it('has its renewal or result write refused while the other worker’s result lands', async () => {
    await f.store.putDag({ id: 'slow-one', tasks: [{ id: 'work', type: 'sleep', config: { durationMs: 4000 }, retries: 2, retryBackoffMs: 0 }] }, SHARDS);
    const run = await f.store.triggerRun(parseDagId('slow-one'));
    const first = await eventually('the job to be leased', async () => (await f.store.listJobs(run.id)).find((j) => j.state === 'leased'), 20_000);
    const paused = first.holder!;
    const other = paused === 'worker-1' ? 'worker-2' : 'worker-1';
    f.cluster.signal(paused, 'SIGSTOP');
    // Past its TTL the sweeper revokes the lease (fence + 1) and the other worker takes the job.
    const second = await eventually(
      'the job to be leased to the other worker',
      async () => {
        const job = (await f.store.listJobs(run.id))[0] as JobRow;
        return job.state === 'leased' && job.holder === other ? job : null;
      },
      TTL_MS * 4,
    );
    expect(second.fence).toBeGreaterThanOrEqual(first.fence + 2);
    // Wake the paused worker while the other still works: its sleep has ended, it renews and writes.
    await sleep(1500);
    f.cluster.signal(paused, 'SIGCONT');
    const refused = await eventually(
      'the paused worker’s writes to be refused',
      async () => {
        const events = await f.store.listEvents({ type: 'write:fenced', limit: 100 });
        const mine = events.filter((e) => e.workerId === paused);
        return mine.length > 0 ? mine : null;
      },
      15_000,
    );
    for (const e of refused) expect(['STALE_FENCE', 'LEASE_LOST']).toContain(e.data.reason);
    const settled = await eventually('the run to finish', () => runSettled(f, run.id), 30_000);
    expect(settled.state).toBe('succeeded');
    const result = await f.store.getResult(first.id);
    expect(result?.workerId).toBe(other);
    expect(result?.fence).toBe(second.fence);
    const job = await f.store.getJob(first.id);
    expect(job.holder).toBe(other);
  });
});

describe('cluster: the leading scheduler killed', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 2, workers: 1 });
  });
  afterAll(async () => f?.stop());

  it('is replaced by the standby within the shard lease TTL plus one tick; missed ticks run once', async () => {
    await f.store.putDag(
      { id: 'heartbeat', schedule: { kind: 'interval', everyMs: 1000 }, catchup: { policy: 'all' }, maxActiveRuns: 20, tasks: [{ id: 'beat', type: 'noop' }] },
      SHARDS,
    );
    const dag = await f.store.getDag(parseDagId('heartbeat'));
    await eventually('a scheduled run', async () => (await f.store.listRuns({ dagId: parseDagId('heartbeat'), limit: 5 })).length > 0, 20_000);
    const before = (await f.store.listShards()).find((s) => s.shard === dag.shard)!;
    const leader = before.holder!;
    expect(leader).toMatch(/^scheduler-/);
    const standby = leader === 'scheduler-1' ? 'scheduler-2' : 'scheduler-1';
    const killedAt = Date.now();
    f.cluster.signal(leader, 'SIGKILL');
    const after = await eventually(
      'the standby to lead the shard',
      async () => {
        const row = (await f.store.listShards()).find((s) => s.shard === dag.shard)!;
        return row.holder === standby ? row : null;
      },
      SHARD_TTL_MS * 5,
      50,
    );
    const takeoverMs = Date.now() - killedAt;
    expect(after.epoch).toBeGreaterThan(before.epoch);
    // The bound is the shard lease TTL plus one tick; the slack covers this test's polling and process scheduling.
    expect(takeoverMs).toBeLessThanOrEqual(SHARD_TTL_MS + TICK_MS + 1500);
    // Every slot of the outage gets exactly one run, created by the new leader's first ticks.
    await sleep(2500);
    const runs = await f.store.listRuns({ dagId: parseDagId('heartbeat'), limit: 500 });
    const slots = runs.map((r) => r.scheduledAt.getTime()).sort((a, b) => a - b);
    expect(new Set(slots).size).toBe(slots.length);
    for (let i = 1; i < slots.length; i++) expect(slots[i]! - slots[i - 1]!).toBe(1000);
    expect(slots.some((s) => s > killedAt && s < killedAt + SHARD_TTL_MS)).toBe(true);
    // Pause the DAG so the set of runs stops growing, then every run must have succeeded.
    await f.store.setPaused(parseDagId('heartbeat'), true);
    await sleep(1500);
    let unfinished: string[] = [];
    await eventually(
      'every run to succeed',
      async () => {
        const all = await f.store.listRuns({ dagId: parseDagId('heartbeat'), limit: 500 });
        unfinished = [];
        for (const r of all.filter((run) => run.state !== 'succeeded')) {
          const jobs = await f.store.listJobs(r.id);
          unfinished.push(`run ${r.id} ${r.state} at ${r.scheduledAt.toISOString()}: ${jobs.map((j) => `${j.taskId}=${j.state}/f${j.fence}/${j.holder ?? '-'}`).join(' ')}`);
        }
        return unfinished.length === 0 ? all : null;
      },
      30_000,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${unfinished.join('\n')}`);
    });
  });
});
