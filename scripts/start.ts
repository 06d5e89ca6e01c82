import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { DEFAULTS } from '@fenceline/core';
import { openStore, startEmbeddedPostgres } from '@fenceline/db';
import { existsSync } from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import { Cluster, REPO_ROOT, waitForHttp } from './cluster';
import { DATA_DIR, readSecrets, writeClusterFile, writeSecrets } from './cluster-file';

/**
 * `npm start`: the whole product on one machine. It starts PostgreSQL (the embedded
 * server under .data/ unless DATABASE_URL is set), two scheduler nodes (one leads every
 * shard, one stands by), four workers, loads the example DAGs and prints where to look.
 * Ctrl-C stops everything gracefully, in order (see relay()).
 */
async function main(): Promise<void> {
  const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres({ dataDir: join(DATA_DIR, 'pg') });
  const databaseUrl = process.env.DATABASE_URL ?? embedded!.url;

  const secrets = await readSecrets();
  const workerToken = process.env.FENCELINE_WORKER_TOKEN ?? secrets.workerToken ?? randomBytes(24).toString('base64url');
  const operatorToken = process.env.FENCELINE_OPERATOR_TOKEN ?? secrets.operatorToken ?? randomBytes(24).toString('base64url');
  await writeSecrets({ ...secrets, workerToken, operatorToken });

  // Migrate once here so the child processes start against a ready schema.
  const store = await openStore({ databaseUrl, applicationName: 'fenceline-start', max: 2 });
  const { shardCount } = await store.initCluster(Number(process.env.FENCELINE_SHARDS ?? DEFAULTS.shardCount));
  const loaded: string[] = [];
  for (const file of (await readdir(join(REPO_ROOT, 'examples'))).sort()) {
    if (!/\.(json|ya?ml)$/.test(file)) continue;
    const text = await readFile(join(REPO_ROOT, 'examples', file), 'utf8');
    const spec = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    const res = await store.putDag(spec, shardCount);
    loaded.push(`${res.dagId}@${res.version}`);
  }
  await store.close();

  const basePort = Number(process.env.FENCELINE_SCHEDULER_PORT ?? 7401);
  const cluster = new Cluster({
    databaseUrl,
    workerToken,
    schedulers: Number(process.env.FENCELINE_SCHEDULERS ?? 2),
    workers: Number(process.env.FENCELINE_WORKERS ?? 4),
    basePort,
    tasksModule: join(REPO_ROOT, 'examples', 'tasks.ts'),
    output: process.env.FENCELINE_QUIET === '1' ? 'quiet' : 'prefixed',
    env: { FENCELINE_SHARDS: String(shardCount) },
  });
  await cluster.start();
  const consoleUrl = await startConsole(cluster, operatorToken, shardCount);
  await writeClusterFile({ databaseUrl, workerToken, operatorToken, schedulerUrls: cluster.schedulerUrls(), consoleUrl: consoleUrl ?? undefined, pid: process.pid });

  const banner = [
    '',
    'fenceline is running',
    `  store:       ${embedded ? `embedded PostgreSQL at ${databaseUrl} (data in ${join(DATA_DIR, 'pg')})` : 'DATABASE_URL'}`,
    `  console:     ${consoleUrl ?? '(not started: FENCELINE_CONSOLE=0)'}   sign in with the operator token`,
    `  schedulers:  ${cluster.schedulerUrls().join('  ')}  (health: /health, metrics: /metrics)`,
    `  workers:     ${cluster.opts.workers} x ${4} slots`,
    `  DAGs loaded: ${loaded.join(', ')}`,
    `  worker token:   ${workerToken}`,
    `  operator token: ${operatorToken}`,
    '  try:  npm run fenceline -- trigger wide-fanout   then   npm run fenceline -- runs',
    '  stop: Ctrl-C',
    '',
  ];
  console.log(banner.join('\n'));

  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) {
      // A second Ctrl-C: no more waiting for anyone, but the store still shuts down cleanly.
      console.log('stopping at once');
      cluster.killAll();
      await embedded?.stop();
      process.exit(1);
    }
    stopping = true;
    console.log('stopping: workers hand back their jobs, schedulers release their shards');
    await cluster.stop();
    await embedded?.stop();
    console.log('fenceline stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGHUP', () => void shutdown());
  // However this process ends, it leaves nothing of the cluster running.
  process.on('exit', () => cluster.killAll());
}

/**
 * Builds the console on first start (or when FENCELINE_REBUILD_CONSOLE=1), then starts it
 * and waits until its sign-in page answers. Returns its URL, or null when disabled.
 */
async function startConsole(cluster: Cluster, operatorToken: string, shardCount: number): Promise<string | null> {
  if (process.env.FENCELINE_CONSOLE === '0') return null;
  const webDir = join(REPO_ROOT, 'apps', 'web');
  if (!existsSync(join(webDir, '.next', 'BUILD_ID')) || process.env.FENCELINE_REBUILD_CONSOLE === '1') {
    console.log('building the console (first start only; about a minute)...');
    const built = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/next/dist/bin/next'), 'build'], { cwd: webDir, stdio: 'inherit', env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' } });
    if (built.status !== 0) throw new Error('the console failed to build (see above); start without it with FENCELINE_CONSOLE=0');
  }
  const port = Number(process.env.FENCELINE_CONSOLE_PORT ?? 7480);
  cluster.startConsole(port, {
    FENCELINE_OPERATOR_TOKEN: operatorToken,
    ...(process.env.FENCELINE_VIEWER_TOKEN ? { FENCELINE_VIEWER_TOKEN: process.env.FENCELINE_VIEWER_TOKEN } : {}),
    FENCELINE_SHARDS: String(shardCount),
    FENCELINE_CAP_PERCENT: process.env.FENCELINE_CAP_PERCENT ?? '30',
  });
  const url = `http://127.0.0.1:${port}`;
  await waitForHttp(`${url}/signin`, 60_000);
  return url;
}

/**
 * A Ctrl-C in a terminal signals every process of the foreground process group at once:
 * the schedulers and the embedded PostgreSQL went down in the same instant as the
 * workers, which then could neither write their last results nor hand back their jobs.
 * So the terminal's process runs only this relay; the cluster runs in a child in a
 * process group of its own, and any stop signal becomes one ordered shutdown there
 * (workers, then console, then schedulers, then the store). A second Ctrl-C kills it all.
 */
function relay(): void {
  const child = spawn(process.execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: ['ignore', 'inherit', 'inherit'],
    detached: true,
    env: { ...process.env, FENCELINE_START_RELAYED: '1' },
  });
  let firstAt: number | null = null;
  const onSignal = (): void => {
    if (firstAt === null) {
      firstAt = Date.now();
      child.kill('SIGTERM');
      return;
    }
    // npm forwards the terminal's SIGINT to its script as well, so one Ctrl-C can arrive
    // twice within moments; only a signal well after the first is a second Ctrl-C.
    if (Date.now() - firstAt < 1_500) return;
    child.kill('SIGTERM');
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, onSignal);
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
}

if (process.env.FENCELINE_START_RELAYED === '1') {
  main().catch((err) => {
    console.error(`fenceline failed to start: ${err instanceof Error ? err.stack : String(err)}`);
    process.exit(1);
  });
} else {
  relay();
}
