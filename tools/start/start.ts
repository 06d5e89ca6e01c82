import { randomBytes } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { capFor, DEFAULTS, logSafeError, logSafeMessage, parseUserName, reserveOf } from '@fenceline/core';
import { lendReserveOf, readLendSettings } from '@fenceline/core/engine';
import { hashPassword, verifyPassword } from '@fenceline/db/people';
import { openStore, startEmbeddedPostgres, type SqlStore } from '@fenceline/db';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { spawn, spawnSync } from 'node:child_process';
import { Cluster, DEFAULT_SHUTDOWN_GRACE_MS, REPO_ROOT, waitForHttp } from './cluster';
import { DATA_DIR, readSecrets, writeClusterFile, writeSecrets } from '@fenceline/cli/cluster-file';
import { AlreadyRunningError, releaseStartLock, takeStartLock, updateStartLock } from './start-lock';

/** The options `npm start -- ...` takes. */
const USAGE = 'usage: npm start [-- --seed-examples]';

interface StartOptions {
  /** Apply examples/* even though the store already holds DAGs. */
  seedExamples: boolean;
}

/** Reads the command line and the settings; a mistake exits 2 before anything starts. */
function readOptions(argv: string[]): StartOptions {
  for (const arg of argv) if (arg !== '--seed-examples') usageError(`unknown option "${arg}"`);
  const seed = process.env.FENCELINE_SEED_EXAMPLES;
  if (seed !== undefined && seed !== '' && seed !== '0' && seed !== '1') usageError(`FENCELINE_SEED_EXAMPLES must be 0 or 1, got "${seed}"`);
  shutdownGraceMs();
  return { seedExamples: argv.includes('--seed-examples') || seed === '1' };
}

/** FENCELINE_SHUTDOWN_GRACE_MS: one setting for the workers' grace and the launcher's wait. */
function shutdownGraceMs(): number {
  const raw = process.env.FENCELINE_SHUTDOWN_GRACE_MS;
  if (raw === undefined || raw === '') return DEFAULT_SHUTDOWN_GRACE_MS;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 0 || ms > 3_600_000) usageError(`FENCELINE_SHUTDOWN_GRACE_MS must be an integer from 0 to 3600000 (ms), got "${raw}"`);
  return ms;
}

function usageError(message: string): never {
  console.error(`${message}\n${USAGE}`);
  process.exit(2);
}

/**
 * `npm start`: the whole product on one machine. It starts PostgreSQL (the embedded
 * server under .data/ unless DATABASE_URL is set), two scheduler nodes (one leads every
 * shard, one stands by), four workers, loads the example DAGs into an empty store and
 * prints where to look. Each process logs to .data/logs/<name>.log; the terminal keeps the
 * banner, warnings and errors. Ctrl-C stops everything gracefully, in order (see relay()).
 */
async function main(): Promise<void> {
  const options = readOptions(process.argv.slice(2));
  const graceMs = shutdownGraceMs();
  const basePort = Number(process.env.FENCELINE_SCHEDULER_PORT ?? 7401);
  const schedulers = Number(process.env.FENCELINE_SCHEDULERS ?? 2);
  const consolePort = process.env.FENCELINE_CONSOLE === '0' ? null : Number(process.env.FENCELINE_CONSOLE_PORT ?? 7480);
  // Ports taken by another program fail the start here, before the store is touched.
  await checkPortsFree([
    ...Array.from({ length: schedulers }, (_, i) => ({ port: basePort + i, what: `scheduler-${i + 1}`, setting: 'FENCELINE_SCHEDULER_PORT' })),
    ...(consolePort === null ? [] : [{ port: consolePort, what: 'the console', setting: 'FENCELINE_CONSOLE_PORT' }]),
  ]);

  const embedded = process.env.DATABASE_URL ? null : await startEmbeddedPostgres({ dataDir: join(DATA_DIR, 'pg') });
  const databaseUrl = process.env.DATABASE_URL ?? embedded!.url;
  let cluster: Cluster | null = null;
  // However this process ends, it leaves nothing of the cluster running.
  process.on('exit', () => cluster?.killAll());
  try {
    const secrets = await readSecrets();
    const token = (): string => randomBytes(24).toString('base64url');
    const workerToken = process.env.FENCELINE_WORKER_TOKEN ?? secrets.workerToken ?? token();
    // The shared console tokens of earlier versions sign nobody in any more.
    const { operatorToken: _operator, viewerToken: _viewer, ...kept } = secrets;
    const adminPassword = kept.adminPassword ?? token();
    await writeSecrets({ ...kept, workerToken, adminPassword });

    // Migrate once here so the child processes start against a ready schema.
    const store = await openStore({ databaseUrl, applicationName: 'fenceline-start', max: 2 });
    let seeded: string;
    let shardCount: number;
    let signIn: string;
    try {
      ({ shardCount } = await store.initCluster(Number(process.env.FENCELINE_SHARDS ?? DEFAULTS.shardCount)));
      seeded = await seedExamples(store, shardCount, options.seedExamples);
      signIn = await ensureFirstAdmin(store, adminPassword);
    } finally {
      await store.close();
    }

    const logDir = join(DATA_DIR, 'logs');
    cluster = new Cluster({
      databaseUrl,
      workerToken,
      schedulers,
      workers: Number(process.env.FENCELINE_WORKERS ?? 4),
      basePort,
      tasksModule: join(REPO_ROOT, 'examples', 'tasks.ts'),
      output: process.env.FENCELINE_QUIET === '1' ? 'quiet' : 'files',
      logDir,
      shutdownGraceMs: graceMs,
      env: { FENCELINE_SHARDS: String(shardCount) },
    });
    await cluster.start();
    const consoleUrl = consolePort === null ? null : await startConsole(cluster, consolePort, shardCount);
    await writeClusterFile({ databaseUrl, workerToken, schedulerUrls: cluster.schedulerUrls(), consoleUrl: consoleUrl ?? undefined, pid: process.pid });
    updateStartLock({ clusterPid: process.pid, consoleUrl: consoleUrl ?? undefined });

    const banner = [
      '',
      // What the schedulers will do with a wide fan-out, by their own rules, so that the
      // idle slots a newcomer sees (or does not) are explained before the first run.
      ...fairShareLines(cluster.opts.workers * 4),
      'fenceline is running',
      `  store:       ${embedded ? `embedded PostgreSQL at ${databaseUrl} (data in ${join(DATA_DIR, 'pg')})` : 'DATABASE_URL'}`,
      `  console:     ${consoleUrl ?? '(not started: FENCELINE_CONSOLE=0)'}   ${signIn}`,
      `  schedulers:  ${cluster.schedulerUrls().join('  ')}  (health: /health, metrics: /metrics)`,
      `  workers:     ${cluster.opts.workers} x ${4} slots`,
      `  DAGs:        ${seeded}`,
      `  logs:        ${logDir}/<process>.log  (here: warnings, errors and stop messages only)`,
      `  worker token:   ${workerToken}`,
      '                  (development mode, FENCELINE_WORKER_AUTH=dev: this one token may act as any worker; production issues one per pool with `npm run fenceline -- worker-token create --pool NAME`)',
      "  users: npm run fenceline -- user create --name NAME --role admin|operator|viewer   (or the console's Users page)",
      '  try:  npm run fenceline -- trigger wide-fanout   then   npm run fenceline -- runs',
      `  stop: Ctrl-C (workers get ${Math.round(graceMs / 1000)} s to finish their jobs; longer ones are handed back)`,
      '',
    ];
    console.log(banner.join('\n'));
  } catch (err) {
    cluster?.killAll();
    await embedded?.stop().catch(() => undefined);
    throw err;
  }
  const running = cluster;

  let stopping = false;
  const shutdown = async (): Promise<void> => {
    if (stopping) {
      // A second Ctrl-C: no more waiting for anyone, but the store still shuts down cleanly.
      console.log('stopping at once');
      running.killAll();
      await embedded?.stop();
      process.exit(1);
    }
    stopping = true;
    console.log(`stopping: workers finish or hand back their jobs (up to ${Math.round(graceMs / 1000)} s), then schedulers release their shards; Ctrl-C again to stop at once`);
    await running.stop();
    await embedded?.stop();
    console.log('fenceline stopped');
    process.exit(0);
  };
  process.on('SIGINT', () => void shutdown());
  process.on('SIGTERM', () => void shutdown());
  process.on('SIGHUP', () => void shutdown());
}

/**
 * Applies examples/* when the store holds no DAG yet, or when asked to
 * (--seed-examples, FENCELINE_SEED_EXAMPLES=1). Re-applying them on every start used to
 * replace edits made in the console with a new version of the example. Says what it did.
 */
async function seedExamples(store: SqlStore, shardCount: number, force: boolean): Promise<string> {
  const { total } = await store.listDags({ limit: 1 });
  if (total > 0 && !force) return `${total} in the store (examples not applied: the store is not empty; \`npm start -- --seed-examples\` applies them)`;
  const loaded: string[] = [];
  for (const file of (await readdir(join(REPO_ROOT, 'examples'))).sort()) {
    if (!/\.(json|ya?ml)$/.test(file)) continue;
    const text = await readFile(join(REPO_ROOT, 'examples', file), 'utf8');
    const spec = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text);
    const res = await store.putDag(spec, shardCount);
    loaded.push(`${res.dagId}@${res.version}`);
  }
  return `examples applied: ${loaded.join(', ')}`;
}

/** Fails with the port, who needed it and the setting that moves it, if any port is taken. */
async function checkPortsFree(wanted: { port: number; what: string; setting: string }[]): Promise<void> {
  for (const w of wanted) {
    const problem = await new Promise<string | null>((resolve) => {
      const server = createServer();
      server.once('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
      server.listen(w.port, '127.0.0.1', () => server.close(() => resolve(null)));
    });
    if (problem) throw new StartRefusal(`port ${w.port} (for ${w.what}) is not free (${problem}): another program is using it; stop it or set ${w.setting} to another port`);
  }
}

/** A start that cannot go ahead, for a reason the message says in full (no stack). */
class StartRefusal extends Error {}

/**
 * A store with no user gets a first admin, `admin`, whose password is kept in
 * .data/secrets.json (mode 0600). Returns the banner's line on how to sign in: the
 * password while it is still that admin's, else only where to find users.
 */
async function ensureFirstAdmin(store: SqlStore, password: string): Promise<string> {
  const name = parseUserName('admin');
  if ((await store.listUsers()).length === 0) {
    await store.createUser({ name, role: 'admin', passwordHash: await hashPassword(password) });
    await store.appendAudit({ actorKind: 'system', actor: 'npm start', action: 'user.created', target: name, details: { role: 'admin', firstAdmin: true }, source: 'cli' });
  }
  const admin = await store.userCredentials({ name });
  if (admin && !admin.disabled && (await verifyPassword(password, admin.passwordHash))) {
    return `sign in as admin, password ${password}  (kept in ${join(DATA_DIR, 'secrets.json')})`;
  }
  return 'sign in with your user name and password (npm run fenceline -- user list)';
}

/** The banner's fair-share line: the cap per DAG and what lending keeps back, for a pool of `slots`. */
function fairShareLines(slots: number): string[] {
  const capPercent = Number(process.env.FENCELINE_CAP_PERCENT ?? '30');
  const cap = capFor(slots, capPercent / 100);
  const rule = lendReserveOf(readLendSettings(process.env));
  if (rule === null) return [`  fair share:  a DAG holds at most ${cap} of the ${slots} slots (${capPercent}%); lending is off (FENCELINE_LEND=off)`];
  const reserve = reserveOf(rule, slots);
  return [
    `  fair share:  a DAG holds ${cap} of the ${slots} slots (${capPercent}%) and borrows idle ones beyond, up to ${slots - reserve}: ${reserve} stay free for other DAGs (FENCELINE_LEND=off for a strict cap)`,
  ];
}

/**
 * Builds the console on first start (or when FENCELINE_REBUILD_CONSOLE=1), then starts it
 * and waits until its sign-in page answers. Returns its URL.
 */
async function startConsole(cluster: Cluster, port: number, shardCount: number): Promise<string> {
  const webDir = join(REPO_ROOT, 'apps', 'web');
  if (!existsSync(join(webDir, '.next', 'BUILD_ID')) || process.env.FENCELINE_REBUILD_CONSOLE === '1') {
    console.log('building the console (first start only; about a minute)...');
    const built = spawnSync(process.execPath, [join(REPO_ROOT, 'node_modules/next/dist/bin/next'), 'build'], {
      cwd: webDir,
      stdio: 'inherit',
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: '1' },
    });
    if (built.status !== 0) throw new Error('the console failed to build (see above); start without it with FENCELINE_CONSOLE=0');
  }
  cluster.startConsole(port, {
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
  readOptions(process.argv.slice(2));
  // A second start in this folder refuses here, before it touches the store or any file.
  try {
    takeStartLock();
  } catch (err) {
    console.error(err instanceof AlreadyRunningError ? err.message : `fenceline cannot start: ${logSafeMessage(err)}`);
    process.exit(1);
  }
  process.on('exit', releaseStartLock);
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
    // An unexpected failure may be a store statement's, which quotes its parameters: the launcher logs it as every process does (log-safe.ts).
    const safe = logSafeError(err);
    console.error(`fenceline failed to start: ${err instanceof StartRefusal ? err.message : safe.stack ? `${safe.error}\n${safe.stack}` : safe.error}`);
    process.exit(1);
  });
} else {
  relay();
}
