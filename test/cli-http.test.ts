import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingMessage } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId, parseRunId } from '@fenceline/core';
import { Cluster } from '../tools/start/cluster';
import { startApiHttp } from '../apps/web/test/support/api-http';
import { runCli, spawnCli, type CliOutcome } from './support/cli-process';
import { eventually, FAST_ENV } from './support/cluster-fixture';
import { registerSecret, runLogFile } from './support/run-logs';

/**
 * The real CLI process over the console's real HTTP API (--url, --token), with no
 * DATABASE_URL in its environment: what it stores and queues is read back from the store,
 * a scheduler node applies its run actions, and each refusal is printed with the API's
 * code and message and the CLI's exit code.
 */

let api: Awaited<ReturnType<typeof startApiHttp>>;
let cluster: Cluster;
let operator: string;
let viewer: string;
let dir: string;
const dagId = parseDagId('cli-http');

/** The CLI as an operator on a machine with only an API token: no DATABASE_URL and no cluster file. */
function cli(args: string[], env: Record<string, string> = {}): Promise<CliOutcome> {
  const { DATABASE_URL: _none, ...rest } = process.env;
  return spawnCli({ ...rest, FENCELINE_DATA_DIR: join(dir, 'no-data'), ...env }, args);
}

const asOperator = (...args: string[]) => cli(['--url', api.url, '--token', operator, ...args]);

/** A port nothing listens on: one the system just gave out and that was closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A proxy in front of the API that forwards every request, records the Idempotency-Key of
 * each one `matches`, and cuts the connection instead of passing on the first such answer:
 * a request that landed but whose answer was lost.
 */
async function lossyProxy(matches: (req: IncomingMessage) => boolean): Promise<{ url: string; keys: string[]; close(): Promise<void> }> {
  const keys: string[] = [];
  const proxy = createHttpServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const matched = matches(req);
      if (matched) keys.push(String(req.headers['idempotency-key']));
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => name !== 'host' && name !== 'content-length')) as Record<string, string>;
      void fetch(`${new URL(api.url).origin}${req.url}`, { method: req.method, headers, body: chunks.length > 0 ? Buffer.concat(chunks) : undefined }).then(async (upstream) => {
        const body = Buffer.from(await upstream.arrayBuffer());
        if (matched && keys.length === 1) {
          req.socket.destroy();
          return;
        }
        res.writeHead(upstream.status, { 'content-type': upstream.headers.get('content-type') ?? 'application/json' });
        res.end(body);
      });
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`,
    keys,
    close: () => new Promise<void>((resolve) => proxy.close(() => resolve())),
  };
}

/** Nothing of how the CLI or the server is built reaches the terminal. */
function expectNoStack(out: CliOutcome): void {
  expect(out.stderr).not.toMatch(/\n\s+at .*[:(]|node_modules|\.ts:\d+|SELECT|INSERT/);
}

beforeAll(async () => {
  api = await startApiHttp();
  operator = await api.tokenFor('operator');
  viewer = await api.tokenFor('viewer');
  dir = await mkdtemp(join(tmpdir(), 'fenceline-cli-http-'));
  // One scheduler and no worker: runs start, their jobs wait, and run actions are applied by the shard's leader.
  cluster = new Cluster({
    tee: runLogFile,
    databaseUrl: process.env.DATABASE_URL!,
    workerToken: randomBytes(18).toString('base64url'),
    basePort: 19400 + Math.floor(Math.random() * 500),
    schedulers: 1,
    workers: 0,
    output: 'quiet',
    env: FAST_ENV,
  });
  registerSecret("a test cluster's worker token", cluster.opts.workerToken);
  await cluster.start();
  await writeFile(
    join(dir, 'cli-http.json'),
    JSON.stringify({
      id: dagId,
      params: { batch: { type: 'integer', default: 1 } },
      tasks: [
        { id: 'one', type: 'noop', config: {} },
        { id: 'two', type: 'noop', config: {}, dependsOn: ['one'] },
      ],
    }),
  );
});

afterAll(async () => {
  await cluster?.stop(5000);
  await api?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the CLI over the HTTP API', () => {
  it('applies a spec file, then finds it unchanged, and lists it', async () => {
    const file = join(dir, 'cli-http.json');
    const first = await asOperator('apply', file, '--idempotency-key', 'apply-1');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    expect(first.stdout.trim()).toBe(`${file}: cli-http version 1 stored`);
    expect((await api.store.getDag(dagId)).version).toBe(1);
    const again = await asOperator('apply', file);
    expect(again.code).toBe(0);
    expect(again.stdout.trim()).toBe(`${file}: cli-http unchanged (version 1)`);
    const dags = await asOperator('dags');
    expect(dags.code).toBe(0);
    expect(dags.stdout).toContain('cli-http');
    expect(dags.stdout).toContain('1 of 1 DAGs');
  });

  it('triggers with params, and a repeated trigger with the same key queues no second run', async () => {
    const first = await asOperator('trigger', dagId, '--param', 'batch=7', '--idempotency-key', 'nightly-7');
    expect(first.stderr).toBe('');
    expect(first.code).toBe(0);
    const match = /^run (\d+) of cli-http queued \(version 1\)\n {2}batch = 7\n$/.exec(first.stdout);
    expect(match, first.stdout).not.toBeNull();
    const again = await asOperator('trigger', dagId, '--param', 'batch=7', '--idempotency-key', 'nightly-7');
    expect(again.code).toBe(0);
    expect(again.stdout).toBe(first.stdout);
    const runs = await api.store.pageRuns({ dagId, limit: 50 });
    expect(runs.rows.map((r) => r.id)).toEqual([match![1]]);
    expect((await api.store.getRun(parseRunId(match![1]!))).params).toEqual({ batch: 7 });
  });

  it("keeps a key its caller's own: the same key against the store is the CLI user's, so it queues a run of its own, once", async () => {
    const [run] = (await api.store.pageRuns({ dagId, limit: 1 })).rows;
    const out = await runCli(process.env.DATABASE_URL!, 'trigger', dagId, '--param', 'batch=7', '--idempotency-key', 'nightly-7');
    expect(out.code, out.stderr).toBe(0);
    const mine = /^run (\d+) of cli-http queued/.exec(out.stdout)?.[1];
    expect(mine, out.stdout).toBeDefined();
    expect(mine).not.toBe(run!.id);
    const again = await runCli(process.env.DATABASE_URL!, 'trigger', dagId, '--param', 'batch=7', '--idempotency-key', 'nightly-7');
    expect(again.stdout).toBe(out.stdout);
    expect((await api.store.pageRuns({ dagId, limit: 50 })).rows).toHaveLength(2);
  });

  it('prints a refused trigger with the code, message and each bad field, and queues nothing', async () => {
    const out = await asOperator('trigger', dagId, '--params', '{"batch": "lots"}');
    expect(out.code).toBe(1);
    expect(out.stderr).toMatch(/^INVALID_INPUT: .*params\.batch/);
    expect(out.stderr).toContain('\n  params.batch: must be an integer');
    expectNoStack(out);
    expect((await api.store.pageRuns({ dagId, limit: 50 })).rows).toHaveLength(2);
  });

  it('lists runs with filters, and names a bad filter', async () => {
    const [run] = (await api.store.pageRuns({ dagId, limit: 1 })).rows;
    const out = await asOperator('runs', dagId, '--trigger', 'manual', '--limit', '5');
    expect(out.code).toBe(0);
    expect(out.stdout).toContain(run!.id);
    expect(out.stdout).toContain('manual');
    const none = await asOperator('runs', dagId, '--trigger', 'schedule');
    expect(none.code).toBe(0);
    expect(none.stdout).not.toContain(run!.id);
    const bad = await asOperator('runs', '--state', 'sleeping');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^INVALID_INPUT: .*state/);
    expect(bad.stderr).toMatch(/\n  (query\.)?state: /);
  });

  it('cancels a run, waits for its leader to apply it, and shows its jobs', async () => {
    // The first run, which the scheduler started; the CLI user's own, queued after it, waits for it to end.
    const runs = (await api.store.pageRuns({ dagId, limit: 50 })).rows;
    const run = runs[runs.length - 1];
    await eventually('the run started by the scheduler', async () => (await api.store.listJobs(parseRunId(run!.id))).length > 0, 30_000);
    const out = await asOperator('cancel', run!.id, '--reason', 'not needed');
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^action \d+ \(cancel\) by .*: applied at .*; run is cancelled\n$/);
    expect((await api.store.getRun(parseRunId(run!.id))).state).toBe('cancelled');
    const jobs = await asOperator('jobs', run!.id);
    expect(jobs.code).toBe(0);
    expect(jobs.stdout).toContain(`run ${run!.id} of cli-http@1: cancelled`);
    expect(jobs.stdout).toContain('params: {"batch":7}');
    expect(jobs.stdout).toMatch(/'one' .*'cancelled'/);
  });

  it('refuses a bad token with UNAUTHORIZED and exit 1', async () => {
    const out = await cli(['--url', api.url, '--token', `flt_${'x'.repeat(43)}`, 'dags']);
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe('UNAUTHORIZED: the API token is not valid: unknown, expired or revoked');
    expect(out.stdout).toBe('');
  });

  it("refuses a viewer's token a write with FORBIDDEN, and lets it read", async () => {
    const before = (await api.store.pageRuns({ dagId, limit: 50 })).rows.length;
    const write = await cli(['trigger', dagId, '--url', api.url, '--token', viewer]);
    expect(write.code).toBe(1);
    expect(write.stderr.trim()).toBe('FORBIDDEN: this needs the operator role; the token has viewer');
    expect((await api.store.pageRuns({ dagId, limit: 50 })).rows.length).toBe(before);
    const read = await cli(['runs', dagId], { FENCELINE_URL: api.url, FENCELINE_TOKEN: viewer });
    expect(read.code).toBe(0);
  });

  it('takes --token over FENCELINE_TOKEN', async () => {
    const out = await cli(['pause', dagId, '--token', operator], { FENCELINE_URL: api.url, FENCELINE_TOKEN: viewer });
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    expect(out.stdout).toMatch(/^cli-http paused; next run -\n$/);
    expect((await api.store.getDag(dagId)).paused).toBe(true);
  });

  it('sets, lists and deletes a resource limit through the API, audited as the token owner; a viewer is refused', async () => {
    const made = await asOperator('limit', 'set', 'http-warehouse', '2');
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toBe('limit http-warehouse: capacity 2 (created), 0 used, 0 waiting\n');
    expect((await asOperator('limit', 'set', 'http-warehouse', '3')).stdout).toBe('limit http-warehouse: capacity 3 (was 2), 0 used, 0 waiting\n');
    const listed = await cli(['--url', api.url, '--token', viewer, 'limit', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/'http-warehouse'\s*│\s*3\s*│\s*0\s*│\s*0/);
    const refused = await cli(['--url', api.url, '--token', viewer, 'limit', 'set', 'http-warehouse', '9']);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^FORBIDDEN: this needs the operator role/);
    const zero = await asOperator('limit', 'set', 'http-warehouse', '0');
    expect(zero.code).toBe(1);
    expect(zero.stderr).toMatch(/^INVALID_INPUT: capacity must be at least 1/);
    expectNoStack(zero);
    expect((await api.store.listResourceLimits()).find((l) => l.name === 'http-warehouse')?.capacity).toBe(3);
    const gone = await asOperator('limit', 'delete', 'http-warehouse');
    expect(gone.stdout).toBe('limit http-warehouse deleted\n');
    const again = await asOperator('limit', 'delete', 'http-warehouse');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('NOT_FOUND: limit "http-warehouse" does not exist\n');
    const entries = (await api.store.listAudit({ limit: 10 })).filter((e) => e.target === 'http-warehouse');
    expect(entries.map((e) => [e.action, e.actorKind])).toEqual([
      ['limit.deleted', 'token'],
      ['limit.set', 'token'],
      ['limit.set', 'token'],
    ]);
  });

  it('backfills over the API: starts one, shows its progress, lists and cancels it, audited as the token owner; a large one needs --yes', async () => {
    const hourly = parseDagId('cli-http-hourly');
    await api.store.putDag({ id: hourly, schedule: { kind: 'interval', everyMs: 3_600_000 }, tasks: [{ id: 'only', type: 'noop' }] }, 4);
    const made = await asOperator('backfill', hourly, '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-01T03:00:00Z', '--max-active', '1', '--no-wait');
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    const id = /^backfill (\d+) of cli-http-hourly: 3 slots from .* at most 1 unfinished runs\n$/.exec(made.stdout)?.[1];
    expect(id, made.stdout).toBeDefined();
    expect((await api.store.getBackfill(id as never)).totalSlots).toBe(3);
    const status = await cli(['--url', api.url, '--token', viewer, 'backfill', 'status', id!]);
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(new RegExp(`^backfill ${id} \\[[#.]{30}\\] \\d+% \\d+/3 slots: .*; running\n$`));
    const listed = await cli(['--url', api.url, '--token', viewer, 'backfill', 'list', hourly]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`'${id}'\\s*│\\s*'cli-http-hourly'`));
    const big = await asOperator('backfill', hourly, '--from', '2025-01-01T00:00:00Z', '--to', '2026-01-01T00:00:00Z', '--no-wait');
    expect(big.code).toBe(1);
    expect(big.stderr).toMatch(/^INVALID_INPUT: .*; run it again with --yes to go ahead\n$/);
    const bad = await asOperator('backfill', hourly, '--from', 'yesterday', '--to', '2026-01-01T00:00:00Z', '--no-wait');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^INVALID_INPUT: .*from/);
    expectNoStack(bad);
    expect(await api.store.listBackfills({ dagId: hourly })).toHaveLength(1);
    const cancelled = await asOperator('backfill', 'cancel', id!);
    expect(cancelled.stdout).toBe(`backfill ${id} cancelled; its queued runs end cancelled\n`);
    expect((await asOperator('backfill', 'cancel', id!)).stdout).toBe(`backfill ${id} is already cancelled\n`);
    const entries = (await api.store.listAudit({ limit: 20 })).filter((e) => e.target === id && e.action.startsWith('backfill.'));
    expect(entries.map((e) => [e.action, e.actorKind])).toEqual([
      ['backfill.cancelled', 'token'],
      ['backfill.created', 'token'],
    ]);
  });

  it('exits 2 for a command the API does not cover, saying it needs the database', async () => {
    for (const command of [['shards'], ['workers'], ['user', 'list'], ['actions', '1']]) {
      const out = await asOperator(...command);
      expect(out.code, command.join(' ')).toBe(2);
      expect(out.stderr.trim()).toBe(`${command[0]} needs the database (DATABASE_URL) and is not available over --url`);
    }
  });

  it('needs a token and an http address with --url, as usage errors', async () => {
    const noToken = await cli(['dags', '--url', api.url]);
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/^--url needs an API token: --token TOKEN or FENCELINE_TOKEN/);
    const badUrl = await cli(['dags', '--url', 'ftp://example', '--token', operator]);
    expect(badUrl.code).toBe(2);
    expect(badUrl.stderr).toMatch(/^--url: must be an http:\/\/ or https:\/\/ address/);
  });

  it('says in one line that an unreachable API cannot be reached', async () => {
    const port = await closedPort();
    const out = await cli(['dags', '--url', `http://127.0.0.1:${port}`, '--token', operator]);
    expect(out.code).toBe(1);
    expect(out.stderr.trim()).toBe(`cannot reach the fenceline API at http://127.0.0.1:${port}/api/v1: ECONNREFUSED`);
    expectNoStack(out);
  });

  it('sends a trigger whose answer was lost again with the same key, and queues one run', async () => {
    const proxy = await lossyProxy((req) => req.method === 'POST' && (req.url ?? '').endsWith('/trigger'));
    try {
      const before = (await api.store.pageRuns({ dagId, limit: 50 })).rows.length;
      const out = await cli(['--url', proxy.url, '--token', operator, 'trigger', dagId, '--param', 'batch=9']);
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      const match = /^run (\d+) of cli-http queued/.exec(out.stdout);
      expect(match, out.stdout).not.toBeNull();
      expect(proxy.keys).toHaveLength(2);
      expect(proxy.keys[0]).toMatch(/^cli-[0-9a-f]{24}$/);
      expect(proxy.keys[1]).toBe(proxy.keys[0]);
      const runs = (await api.store.pageRuns({ dagId, limit: 50 })).rows;
      expect(runs).toHaveLength(before + 1);
      expect(runs[0]!.id).toBe(match![1]);
    } finally {
      await proxy.close();
    }
  });

  it('sends a backfill whose answer was lost again with the same key, and starts one backfill', async () => {
    const daily = parseDagId('cli-http-daily');
    await api.store.putDag({ id: daily, schedule: { kind: 'interval', everyMs: 86_400_000 }, tasks: [{ id: 'only', type: 'noop' }] }, 4);
    const proxy = await lossyProxy((req) => req.method === 'POST' && (req.url ?? '').endsWith('/backfills'));
    try {
      const out = await cli(['--url', proxy.url, '--token', operator, 'backfill', daily, '--from', '2026-02-01T00:00:00Z', '--to', '2026-02-03T00:00:00Z', '--no-wait']);
      expect(out.stderr).toBe('');
      expect(out.code).toBe(0);
      // The repeat is the command's own, so it reads as a backfill started now, not an earlier one.
      const id = /^backfill (\d+) of cli-http-daily: 2 slots from /.exec(out.stdout)?.[1];
      expect(id, out.stdout).toBeDefined();
      expect(proxy.keys).toHaveLength(2);
      expect(proxy.keys[0]).toMatch(/^cli-[0-9a-f]{24}$/);
      expect(proxy.keys[1]).toBe(proxy.keys[0]);
      const backfills = await api.store.listBackfills({ dagId: daily });
      expect(backfills.map((b) => b.id)).toEqual([id]);
    } finally {
      await proxy.close();
    }
  });

  it('numbers attempts through the job’s life after a clear, in the API’s history and the CLI’s columns', async () => {
    // A service that fails until it is repaired, and a worker, started now: the tests above need jobs that wait.
    let failing = true;
    const service = createHttpServer((_req, res) => {
      res.statusCode = failing ? 500 : 200;
      res.end(failing ? 'down' : 'ok');
    });
    await new Promise<void>((resolve) => service.listen(0, '127.0.0.1', resolve));
    try {
      const flaky = parseDagId('cli-http-flaky');
      const url = `http://127.0.0.1:${(service.address() as AddressInfo).port}/load`;
      await api.store.putDag({ id: flaky, tasks: [{ id: 'load', type: 'http', config: { url } }] }, 4);
      cluster.startWorker(0);
      const run = await api.store.triggerRun(flaky);
      await eventually('the run to fail', async () => (await api.store.getRun(run.id)).state === 'failed', 60_000);
      failing = false;
      const cleared = await asOperator('clear', run.id, '--task', 'load');
      expect(cleared.code, cleared.stderr).toBe(0);
      await eventually('the cleared run to succeed', async () => (await api.store.getRun(run.id)).state === 'succeeded', 60_000);

      // The history counts the run's lease grants in the event log, which a node writes in
      // batches after the grants themselves: wait until the second grant is there.
      type JobAnswer = { taskId: string; attempt: number; history?: { seen: number; lastClear: { kind: string; by: string } | null } };
      const loadJob = async (): Promise<JobAnswer> => {
        const res = await fetch(`${api.url}/runs/${run.id}`, { headers: { authorization: `Bearer ${viewer}` } });
        expect(res.status).toBe(200);
        return ((await res.json()) as { jobs: JobAnswer[] }).jobs.find((j) => j.taskId === 'load')!;
      };
      await eventually('both grants in the event log', async () => (await loadJob()).history?.seen === 2, 30_000);
      const load = await loadJob();
      const [action] = await api.store.listRunActions(run.id);
      expect(load.attempt).toBe(1);
      expect(load.history).toMatchObject({ seen: 2, lastClear: { kind: 'clear', by: action!.requestedBy } });

      const jobs = await cli(['--url', api.url, '--token', viewer, 'jobs', run.id]);
      expect(jobs.code, jobs.stderr).toBe(0);
      const line = jobs.stdout.split('\n').find((l) => l.includes("'load'"));
      expect(line, jobs.stdout).toMatch(new RegExp(`'load'\\s*│\\s*'succeeded'\\s*│\\s*2\\s*│\\s*'1/\\d+'\\s*│\\s*'by ${action!.requestedBy} `));
    } finally {
      await new Promise((resolve) => service.close(resolve));
    }
  });

  it('prints the command to repeat with the key when no try is answered', async () => {
    const port = await closedPort();
    const out = await cli(['--url', `http://127.0.0.1:${port}`, '--token', operator, 'trigger', dagId]);
    expect(out.code).toBe(1);
    const [sent, repeat, reason] = out.stderr.trim().split('\n');
    expect(sent).toMatch(/^sent 3 times with idempotency key cli-[0-9a-f]{24} and not answered; it may have been applied/);
    const key = /key (cli-[0-9a-f]{24})/.exec(sent!)![1];
    expect(repeat).toBe(`  npm run fenceline -- trigger ${dagId} --idempotency-key ${key}`);
    expect(reason).toBe(`cannot reach the fenceline API at http://127.0.0.1:${port}/api/v1: ECONNREFUSED`);
    expectNoStack(out);
  });
});
