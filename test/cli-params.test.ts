import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { ADMIN_URL } from './support/cluster-fixture';
import { runCli } from './support/cli-process';

/**
 * `fenceline trigger --param` as an operator runs it: the real CLI process against a
 * database of its own, checked through the store it wrote.
 */

let databaseName: string;
let databaseUrl: string;
let store: SqlStore;
const dagId = parseDagId('report');

beforeAll(async () => {
  databaseName = `fenceline_cli_params_${randomBytes(4).toString('hex')}`;
  databaseUrl = await createDatabase(ADMIN_URL, databaseName);
  store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
  await store.initCluster(16);
  await store.putDag(
    {
      id: dagId,
      params: {
        region: { type: 'string', enum: ['eu', 'us'], default: 'eu' },
        batch: { type: 'integer', required: true },
        dryRun: { type: 'boolean', default: false },
      },
      tasks: [{ id: 'only', type: 'noop' }],
    },
    16,
  );
});
afterAll(async () => {
  await store?.close();
  if (databaseName) await dropDatabase(ADMIN_URL, databaseName).catch(() => undefined);
});

describe('cli: trigger with params', () => {
  it('reads each --param as its declared type, fills in the defaults and stores them with the run', async () => {
    const { code, stdout, stderr } = await runCli(databaseUrl, 'trigger', 'report', '--param', 'batch=10', '--param', 'dryRun=true');
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^run \d+ of report queued \(version 1\)\n {2}batch = 10\n {2}dryRun = true\n {2}region = "eu"\n$/);
    const [run] = await store.listRuns({ dagId, limit: 1 });
    expect(run!.params).toEqual({ region: 'eu', batch: 10, dryRun: true });
    const jobs = await runCli(databaseUrl, 'jobs', run!.id);
    expect(jobs.stdout.split('\n').slice(0, 2)).toEqual([`run ${run!.id} of report@1: queued`, 'params: {"batch":10,"dryRun":true,"region":"eu"}']);
  });

  it('takes --params as JSON, with --param on top', async () => {
    const { code } = await runCli(databaseUrl, 'trigger', 'report', '--params', '{"batch": 3, "region": "us"}', '--param', 'region=eu');
    expect(code).toBe(0);
    const [run] = await store.listRuns({ dagId, limit: 1 });
    expect(run!.params).toEqual({ region: 'eu', batch: 3, dryRun: false });
  });

  it('refuses bad values with the invalid-input exit code, prints each bad field, and queues nothing', async () => {
    const before = (await store.listRuns({ dagId, limit: 100 })).length;
    const { code, stdout, stderr } = await runCli(databaseUrl, 'trigger', 'report', '--param', 'batch=lots', '--param', 'region=asia', '--param', 'colour=red');
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr.split('\n')).toEqual([
      expect.stringMatching(/^INVALID_INPUT: run params refused: /),
      '  params.colour: is not a parameter of this DAG',
      '  params.batch: must be an integer, got "lots"',
      '  params.region: must be one of "eu", "us"',
      '',
    ]);
    const missing = await runCli(databaseUrl, 'trigger', 'report');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('  params.batch: is required');
    const notJson = await runCli(databaseUrl, 'trigger', 'report', '--params', '{batch');
    expect(notJson.code).toBe(1);
    expect(notJson.stderr).toContain('--params must be a JSON object');
    expect(await store.listRuns({ dagId, limit: 100 })).toHaveLength(before);
  });
});
