import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseRunId, type RunRow } from '@fenceline/core';
import { eventually, FAST_ENV, loadExample, startFixture, type Fixture } from './support/cluster-fixture';

const SHARDS = Number(FAST_ENV.FENCELINE_SHARDS);

async function settled(f: Fixture, runId: string): Promise<RunRow | null> {
  const run = await f.store.getRun(parseRunId(runId));
  return run.state === 'succeeded' || run.state === 'failed' ? run : null;
}

async function outputOf(f: Fixture, runId: string, taskId: string): Promise<unknown> {
  const job = (await f.store.listJobs(parseRunId(runId))).find((j) => j.taskId === taskId)!;
  return (await f.store.getResult(job.id))?.output;
}

/**
 * Params and upstream outputs through real processes: a scheduler, a worker running the
 * examples' handlers and shell jobs, and PostgreSQL.
 */
describe('cluster: run params and upstream outputs', () => {
  let f: Fixture;
  beforeAll(async () => {
    f = await startFixture({ schedulers: 1, workers: 1, workerSlots: 4, env: { FENCELINE_ALLOW_SHELL: '1' } });
  });
  afterAll(async () => f?.stop());

  it('hands handlers the trigger params, and the downstream task the accepted output of its upstream', async () => {
    const spec = await loadExample('params-report.yaml');
    await f.store.putDag(spec, SHARDS);
    const run = await f.store.triggerRun(parseDagId(spec.id), { params: { batch: 20, region: 'us' } });
    expect((await eventually(`run ${run.id} to finish`, () => settled(f, run.id), 60_000)).state).toBe('succeeded');
    const params = { batch: 20, dryRun: false, region: 'us' };
    const extract = await outputOf(f, run.id, 'extract');
    expect(extract).toEqual({ task: 'extract', params, upstream: {} });
    expect(await outputOf(f, run.id, 'report')).toEqual({ task: 'report', params, upstream: { extract } });
  });

  it('gives shell tasks the params as variables and the upstream output as a file, and a scheduled run the defaults', async () => {
    const read =
      'const fs = require("fs"); console.log(JSON.stringify({ region: process.env.FENCELINE_PARAM_region, up: JSON.parse(fs.readFileSync(process.env.FENCELINE_UPSTREAM_first_OUTPUT, "utf8")) }))';
    await f.store.putDag(
      {
        id: 'shell-params',
        schedule: { kind: 'interval', everyMs: 60_000 },
        catchup: { policy: 'latest', windowMs: 3_600_000 },
        params: { region: { type: 'string', default: 'eu' } },
        tasks: [
          { id: 'first', type: 'summarize' },
          { id: 'second', type: 'shell', dependsOn: ['first'], config: { command: process.execPath, args: ['-e', read] } },
        ],
      },
      SHARDS,
    );
    const dagId = parseDagId('shell-params');
    const manual = await f.store.triggerRun(dagId, { params: { region: 'us' } });
    expect((await eventually(`run ${manual.id} to finish`, () => settled(f, manual.id), 60_000)).state).toBe('succeeded');
    const shell = (await outputOf(f, manual.id, 'second')) as { stdout: string };
    expect(JSON.parse(shell.stdout)).toEqual({ region: 'us', up: { task: 'first', params: { region: 'us' }, upstream: {} } });

    const scheduled = await eventually(
      'a scheduled run of shell-params to finish',
      async () => {
        const run = (await f.store.listRuns({ dagId, limit: 10 })).find((r) => r.trigger === 'schedule');
        return run && (await settled(f, run.id));
      },
      90_000,
    );
    expect(scheduled).toMatchObject({ state: 'succeeded', params: { region: 'eu' } });
    expect(await outputOf(f, scheduled.id, 'first')).toMatchObject({ params: { region: 'eu' } });
  });
});
