import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { parseUserName } from '@fenceline/core';
import { acquireServer, createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { hashPassword } from '@fenceline/db/people';
import { registerSecret, runLogFile } from '../../test/support/run-logs';
import { Cluster, FAST_LEASES_ENV, waitForHttp } from '../../tools/start/cluster';
import { chromiumPath, missingChromium } from './chromium';
import { freePort, freePortRun } from './ports';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS = join(REPO_ROOT, 'e2e', 'artifacts');

/** Someone who signs in to the console: every harness has one user of each role. */
export interface E2eUser {
  name: string;
  password: string;
}
export const ADMIN: E2eUser = { name: 'e2e-admin', password: 'e2e-admin-password-0123' };
export const OPERATOR: E2eUser = { name: 'e2e-operator', password: 'e2e-operator-password-0123' };
export const VIEWER: E2eUser = { name: 'e2e-viewer', password: 'e2e-viewer-password-0123' };
export const SHARDS = 4;
export const WORKERS = 3;
export const SLOTS = 4;
export const CAP_PERCENT = 30;

/** Short TTLs so a failover and a lease expiry happen within seconds of the test. */
export const CLUSTER_ENV: Record<string, string> = {
  ...FAST_LEASES_ENV,
  FENCELINE_SHARDS: String(SHARDS),
  FENCELINE_CAP_PERCENT: String(CAP_PERCENT),
  FENCELINE_WORKER_HEARTBEAT_INTERVAL_MS: '2000',
  FENCELINE_WORKER_LIVE_WINDOW_MS: '10000',
  FENCELINE_RECONCILE_INTERVAL_MS: '1000',
  FENCELINE_LOG_LEVEL: 'warn',
};

export interface Harness {
  adminUrl: string;
  dbName: string;
  databaseUrl: string;
  store: SqlStore;
  cluster: Cluster;
  consoleUrl: string;
  console: ChildProcess;
  consoleLogs: string[];
  browser: Browser;
  stop(): Promise<void>;
}

/** The built console under `next start` on a free port, against `databaseUrl`, once it answers. */
async function startConsole(databaseUrl: string): Promise<{ proc: ChildProcess; url: string; logs: string[] }> {
  const port = await freePort();
  const logs: string[] = [];
  const nextBin = join(REPO_ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');
  const proc = spawn(process.execPath, [nextBin, 'start', '-H', '127.0.0.1', '-p', String(port)], {
    cwd: join(REPO_ROOT, 'apps', 'web'),
    env: {
      ...process.env,
      ...CLUSTER_ENV,
      DATABASE_URL: databaseUrl,
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  // A copy of its output goes to the run's log folder, grepped for secrets once the run ends (e2e/run.ts).
  const tee = runLogFile('console');
  const keep = (b: Buffer): void => {
    logs.push(b.toString());
    tee?.write(b);
  };
  proc.stdout!.on('data', keep);
  proc.stderr!.on('data', keep);
  if (tee) proc.once('close', () => tee.end());
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/signin`, 60_000);
  } catch (error) {
    stopConsole(proc);
    throw error;
  }
  return { proc, url, logs };
}

/** `next start` runs a next-server child: signal the whole process group so neither outlives the test. */
function stopConsole(proc: ChildProcess): void {
  if (!proc.pid || proc.exitCode !== null) return;
  try {
    process.kill(-proc.pid, 'SIGTERM');
  } catch {
    /* already gone */
  }
}

/**
 * Everything the browser tests run against, all real: a fresh database on the run's
 * PostgreSQL (DATABASE_URL, which `test:e2e` sets; else the server on 127.0.0.1:5432; else
 * an embedded one for this file), two scheduler processes and three workers from
 * tools/start/cluster.ts, and the built console under `next start`. The console must have been
 * built first (`test:e2e` does).
 *
 * Each part is stopped in reverse order, by `stop()` or as soon as a later part fails to
 * start: a half-started harness left a scheduler, a database and open connections behind,
 * and they held the test file open until its timeout.
 */
export async function startHarness(options: { tasksModule?: string } = {}): Promise<Harness> {
  const noChromium = missingChromium();
  if (noChromium) throw new Error(noChromium);
  await mkdir(ARTIFACTS, { recursive: true });
  const started: (() => Promise<unknown> | void)[] = [];
  const stop = async () => {
    for (const step of started.splice(0).reverse()) await Promise.resolve(step()).catch(() => undefined);
  };
  try {
    const server = await acquireServer();
    started.push(() => server.release());
    const adminUrl = server.url;
    const dbName = `fenceline_e2e_${process.pid}_${Date.now().toString(36)}`;
    const databaseUrl = await createDatabase(adminUrl, dbName);
    started.push(() => dropDatabase(adminUrl, dbName));
    const store = await openStore({ databaseUrl, applicationName: 'fenceline-e2e', max: 4 });
    started.push(() => store.close());
    await store.initCluster(SHARDS);
    for (const [user, role] of [
      [ADMIN, 'admin'],
      [OPERATOR, 'operator'],
      [VIEWER, 'viewer'],
    ] as const) {
      await store.createUser({ name: parseUserName(user.name), role, passwordHash: await hashPassword(user.password) });
    }

    const workerToken = 'e2e-worker-token-0123456789abcdef';
    registerSecret("the e2e cluster's worker token", workerToken);
    for (const [user, role] of [
      [ADMIN, 'admin'],
      [OPERATOR, 'operator'],
      [VIEWER, 'viewer'],
    ] as const)
      registerSecret(`the e2e ${role}'s password`, user.password);
    const cluster = new Cluster({
      databaseUrl,
      workerToken,
      schedulers: 2,
      workers: WORKERS,
      workerSlots: SLOTS,
      // The schedulers listen on the base port and the one above it.
      basePort: await freePortRun(2),
      env: CLUSTER_ENV,
      // The example job types too (ticker logs over time, for the live log's test), unless the
      // test file brings its own.
      tasksModule: options.tasksModule ?? join(REPO_ROOT, 'examples', 'tasks.ts'),
      output: process.env.E2E_VERBOSE === '1' ? 'prefixed' : 'quiet',
      tee: runLogFile,
    });
    started.push(() => cluster.stop(5_000));
    await cluster.start();

    const web = await startConsole(databaseUrl);
    started.push(() => stopConsole(web.proc));
    const browser = await chromium.launch({
      executablePath: chromiumPath(),
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    started.push(() => browser.close());

    return { adminUrl, dbName, databaseUrl, store, cluster, consoleUrl: web.url, console: web.proc, consoleLogs: web.logs, browser, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Fills in and sends the sign-in form of a page already on /signin. */
export async function fillSignIn(page: Page, user: E2eUser): Promise<void> {
  await page.getByTestId('signin-name').fill(user.name);
  await page.getByTestId('signin-password').fill(user.password);
  await page.getByTestId('signin-submit').click();
}

/** A page signed in as `user` (the operator unless told), at a laptop-sized viewport. */
export async function signedInPage(h: Harness, user: E2eUser = OPERATOR, viewport = { width: 1440, height: 900 }): Promise<Page> {
  const context = await h.browser.newContext({ viewport, colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(`${h.consoleUrl}/signin`);
  await fillSignIn(page, user);
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
  for (const cookie of await context.cookies()) registerSecret(`a console session cookie (${cookie.name}) of ${user.name}`, cookie.value);
  return page;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Polls `fn` until it returns something truthy, or fails naming what it waited for and the last error. */
export async function until<T>(what: string, fn: () => Promise<T | undefined | null | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value) return value;
    } catch (err) {
      last = err;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}
