import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, type JobRow, type RunId } from '@fenceline/core';
import { eventually, FAST_ENV, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

describe('worker pools, labels and shell through real schedulers and workers', () => {
  let f: Fixture;
  beforeAll(async () => {
    // One worker of the default pool, shell not allowed (the default).
    f = await startFixture({ schedulers: 2, workers: 1, env: { FENCELINE_ALLOW_SHELL: '0' } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  const jobsOf = async (runId: RunId): Promise<Record<string, JobRow>> => Object.fromEntries((await f.store.listJobs(runId)).map((j) => [j.taskId, j]));

  it('a job waits for a worker of its pool with its labels, and a shell job only ever reaches a worker with shell', async () => {
    await f.store.putDag(
      {
        id: 'pools-mixed',
        tasks: [
          { id: 'plain', type: 'noop' },
          { id: 'fit', type: 'noop', pool: 'gpu', labels: ['cuda'] },
          { id: 'sh', type: 'shell', config: { command: 'true' } },
        ],
      },
      SHARDS,
    );
    const run = await f.store.triggerRun(parseDagId('pools-mixed'));
    await eventually('the plain job to succeed', async () => (await jobsOf(run.id)).plain?.state === 'succeeded', 60_000);
    // Long enough for several dispatch rounds and polls: the others wait, ready, and are never leased.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    let jobs = await jobsOf(run.id);
    expect(jobs.fit).toMatchObject({ state: 'ready', attempt: 0 });
    expect(jobs.sh).toMatchObject({ state: 'ready', attempt: 0 });

    // A GPU worker without the label changes nothing; one with it runs the job.
    f.cluster.startWorker(1, { FENCELINE_WORKER_ID: 'gpu-plain', FENCELINE_WORKER_POOL: 'gpu' });
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await jobsOf(run.id)).fit).toMatchObject({ state: 'ready', attempt: 0 });
    f.cluster.startWorker(2, { FENCELINE_WORKER_ID: 'gpu-cuda', FENCELINE_WORKER_POOL: 'gpu', FENCELINE_WORKER_LABELS: 'cuda,region=eu' });
    await eventually('the GPU job to succeed', async () => (await jobsOf(run.id)).fit?.state === 'succeeded', 60_000);
    expect((await f.store.getResult((await jobsOf(run.id)).fit!.id))?.workerId).toBe('gpu-cuda');
    expect((await jobsOf(run.id)).sh).toMatchObject({ state: 'ready', attempt: 0 });

    // A worker of the default pool with shell allowed runs the shell job, at its first attempt.
    f.cluster.startWorker(3, { FENCELINE_WORKER_ID: 'shell-ok', FENCELINE_ALLOW_SHELL: '1' });
    await eventually('the shell job to succeed', async () => (await jobsOf(run.id)).sh?.state === 'succeeded', 60_000);
    jobs = await jobsOf(run.id);
    expect(jobs.sh!.attempt).toBe(1);
    expect((await f.store.getResult(jobs.sh!.id))?.workerId).toBe('shell-ok');
    await eventually('the run to succeed', async () => (await f.store.getRun(run.id)).state === 'succeeded', 30_000);
  });

  it('registers each worker with its offer, for the console to read', async () => {
    const workers = await f.store.listWorkers(60_000);
    const offers = Object.fromEntries(workers.map((w) => [w.id, (w.meta as { offer?: unknown }).offer]));
    expect(offers['gpu-cuda']).toMatchObject({ pool: 'gpu', labels: ['cuda', 'region=eu'] });
    expect(offers['worker-1']).toMatchObject({ pool: 'default', labels: [] });
    expect((offers['shell-ok'] as { types: string[] }).types).toContain('shell');
    expect((offers['worker-1'] as { types: string[] }).types).not.toContain('shell');
  });

  it("runs at most a limit's capacity of its jobs at once across DAGs, and every one of them in the end", async () => {
    await f.store.setResourceLimit({ name: 'warehouse', capacity: 2 });
    const runs: RunId[] = [];
    for (const id of ['load-a', 'load-b']) {
      await f.store.putDag({ id, tasks: [0, 1, 2].map((i) => ({ id: `t${i}`, type: 'sleep', config: { durationMs: 600 }, resources: { warehouse: 1 } })) }, SHARDS);
      runs.push((await f.store.triggerRun(parseDagId(id))).id);
    }
    for (const runId of runs) await eventually(`run ${runId} to succeed`, async () => (await f.store.getRun(runId)).state === 'succeeded', 60_000);
    const jobs = (await Promise.all(runs.map((r) => f.store.listJobs(r)))).flat();
    expect(jobs).toHaveLength(6);
    // At every job's start, at most two jobs (itself included) were running.
    for (const job of jobs) {
      const at = job.leasedAt!.getTime();
      const running = jobs.filter((j) => j.leasedAt!.getTime() <= at && j.endedAt!.getTime() > at);
      expect(running.length, `jobs running when ${job.taskId} started`).toBeLessThanOrEqual(2);
    }
    expect((await f.store.listResourceLimits()).find((l) => l.name === 'warehouse')).toMatchObject({ capacity: 2, used: 0, waiting: 0 });
  });
});

/** The most jobs of `jobs` that ran at once, from their lease and end times. */
const peak = (jobs: JobRow[]): number =>
  Math.max(
    ...jobs.map((job) => {
      const at = job.leasedAt!.getTime();
      return jobs.filter((j) => j.leasedAt!.getTime() <= at && j.endedAt!.getTime() > at).length;
    }),
  );

describe('lending idle slots beyond the cap through real schedulers and workers', () => {
  let f: Fixture;
  beforeAll(async () => {
    // Two workers of four slots: a pool of 8, a cap of 25% (2 slots) and a reserve of 25% (2 slots).
    f = await startFixture({ schedulers: 2, workers: 2, env: { FENCELINE_WORKER_SLOTS: '4', FENCELINE_CAP_PERCENT: '25', FENCELINE_LEND_RESERVE_PERCENT: '25' } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('lets a wide DAG borrow past its cap but never the reserve, which another DAG then starts in at once', async () => {
    await eventually('both workers to join the pool', async () => (await f.store.listWorkers(10_000)).length === 2, 30_000);
    await f.store.putDag({ id: 'lend-wide', tasks: Array.from({ length: 12 }, (_, i) => ({ id: `t${i}`, type: 'sleep', config: { durationMs: 3_000 } })) }, SHARDS);
    await f.store.putDag({ id: 'lend-other', tasks: [{ id: 'quick', type: 'noop' }] }, SHARDS);
    const wide = await f.store.triggerRun(parseDagId('lend-wide'));
    // Once the wide DAG holds what it may (8 slots less the reserve of 2), another DAG's job arrives.
    await eventually('the wide DAG to borrow', async () => (await f.store.listJobs(wide.id)).filter((j) => j.state === 'leased').length >= 6, 30_000);
    const other = await f.store.triggerRun(parseDagId('lend-other'));
    await eventually('the other DAG to finish', async () => (await f.store.getRun(other.id)).state === 'succeeded', 30_000);
    const quick = (await f.store.listJobs(other.id))[0]!;
    // It started from the reserve while the wide DAG still held its loans (each job sleeps 3 s).
    const wideJobs = await f.store.listJobs(wide.id);
    const wideAtStart = wideJobs.filter(
      (j) => j.leasedAt !== null && j.leasedAt.getTime() <= quick.leasedAt!.getTime() && (j.endedAt === null || j.endedAt.getTime() > quick.leasedAt!.getTime()),
    );
    expect(wideAtStart.length).toBeGreaterThan(2);
    await eventually('the wide run to succeed', async () => (await f.store.getRun(wide.id)).state === 'succeeded', 90_000);
    const done = await f.store.listJobs(wide.id);
    expect(done.every((j) => j.state === 'succeeded')).toBe(true);
    // Above its cap of 2, and never into the reserve: at most 6 of its jobs at once.
    const most = peak(done);
    expect(most).toBeGreaterThan(2);
    expect(most).toBeLessThanOrEqual(6);
  });
});

describe("lending by default on the demo's cluster", () => {
  let f: Fixture;
  beforeAll(async () => {
    // The shape `npm start` runs: four workers of four slots and a cap of 30%, lending left
    // to the defaults: a pool of 16, a cap of 4, and a reserve of 2 (the floor of 10 slots
    // held to an eighth of the pool).
    f = await startFixture({ schedulers: 2, workers: 4, env: { FENCELINE_WORKER_SLOTS: '4', FENCELINE_CAP_PERCENT: '30' } });
  });
  afterAll(async () => {
    await f?.stop();
  });

  it('keeps 14 of the 16 slots busy with a wide fan-out, where the strict cap kept 4', async () => {
    // Four workers and two schedulers start on a busy machine, so joining is given time.
    await eventually('the four workers to join the pool', async () => (await f.store.listWorkers(10_000)).length === 4, 120_000);
    await f.store.putDag({ id: 'demo-wide', tasks: Array.from({ length: 42 }, (_, i) => ({ id: `t${i}`, type: 'sleep', config: { durationMs: 3_000 } })) }, SHARDS);
    const wide = await f.store.triggerRun(parseDagId('demo-wide'));
    // The leases of the run, sampled by single reads (each one snapshot of the store) until
    // it ends. Lease and end times cannot tell this: each is its transaction's start, so a
    // grant that waited on the lending lock can read as starting before a lease it saw end.
    let most = 0;
    await eventually(
      'the wide run to succeed',
      async () => {
        const jobs = await f.store.listJobs(wide.id);
        most = Math.max(most, jobs.filter((j) => j.state === 'leased').length);
        return jobs.length === 42 && jobs.every((j) => j.state === 'succeeded');
      },
      180_000,
    );
    // 14 at once (4 by right, 10 lent), never the reserve's 2.
    expect(most).toBe(14);
  }, 360_000);
});
