import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import net from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium, type Browser, type Page } from 'playwright-core';
import { acquireServer, createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { Cluster, FAST_LEASES_ENV, waitForHttp } from '../../scripts/cluster';
import { chromiumPath, missingChromium } from './chromium';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const ARTIFACTS = join(REPO_ROOT, 'e2e', 'artifacts');

export const OPERATOR_TOKEN = 'e2e-operator-token-0123456789abcdef';
export const VIEWER_TOKEN = 'e2e-viewer-token-0123456789abcdef';
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

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

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

/**
 * Everything the browser tests run against, all real: a fresh database on the run's
 * PostgreSQL (DATABASE_URL, which `test:e2e` sets; else the server on 127.0.0.1:5432; else
 * an embedded one for this file), two scheduler processes and three workers from
 * scripts/cluster.ts, and the built console under `next start`. The console must have been
 * built first (`test:e2e` does).
 */
export async function startHarness(): Promise<Harness> {
  const noChromium = missingChromium();
  if (noChromium) throw new Error(noChromium);
  await mkdir(ARTIFACTS, { recursive: true });
  const server = await acquireServer();
  const adminUrl = server.url;
  const dbName = `fenceline_e2e_${process.pid}_${Date.now().toString(36)}`;
  const databaseUrl = await createDatabase(adminUrl, dbName);
  const store = await openStore({ databaseUrl, applicationName: 'fenceline-e2e', max: 4 });
  await store.initCluster(SHARDS);

  const basePort = await freePort();
  const cluster = new Cluster({
    databaseUrl,
    workerToken: 'e2e-worker-token-0123456789abcdef',
    schedulers: 2,
    workers: WORKERS,
    workerSlots: SLOTS,
    basePort,
    env: CLUSTER_ENV,
    output: process.env.E2E_VERBOSE === '1' ? 'prefixed' : 'quiet',
  });
  // The second scheduler's port must be free too; freePort only checked the first.
  await cluster.start();

  const port = await freePort();
  const consoleLogs: string[] = [];
  const nextBin = join(REPO_ROOT, 'node_modules', 'next', 'dist', 'bin', 'next');
  const consoleProc = spawn(process.execPath, [nextBin, 'start', '-H', '127.0.0.1', '-p', String(port)], {
    cwd: join(REPO_ROOT, 'apps', 'web'),
    env: {
      ...process.env,
      ...CLUSTER_ENV,
      DATABASE_URL: databaseUrl,
      FENCELINE_OPERATOR_TOKEN: OPERATOR_TOKEN,
      FENCELINE_VIEWER_TOKEN: VIEWER_TOKEN,
      NEXT_TELEMETRY_DISABLED: '1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  consoleProc.stdout!.on('data', (b: Buffer) => consoleLogs.push(b.toString()));
  consoleProc.stderr!.on('data', (b: Buffer) => consoleLogs.push(b.toString()));
  const consoleUrl = `http://127.0.0.1:${port}`;
  await waitForHttp(`${consoleUrl}/signin`, 60_000);

  const browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });

  return {
    adminUrl,
    dbName,
    databaseUrl,
    store,
    cluster,
    consoleUrl,
    console: consoleProc,
    consoleLogs,
    browser,
    async stop() {
      await browser.close().catch(() => undefined);
      // `next start` runs a next-server child: signal the whole process group so neither outlives the test.
      if (consoleProc.pid && consoleProc.exitCode === null) {
        try {
          process.kill(-consoleProc.pid, 'SIGTERM');
        } catch {
          /* already gone */
        }
      }
      await cluster.stop(5_000);
      await store.close();
      await dropDatabase(adminUrl, dbName).catch(() => undefined);
      await server.release();
    },
  };
}

/** A signed-in page at a laptop-sized viewport. */
export async function signedInPage(h: Harness, token = OPERATOR_TOKEN, viewport = { width: 1440, height: 900 }): Promise<Page> {
  const context = await h.browser.newContext({ viewport, colorScheme: 'dark' });
  const page = await context.newPage();
  await page.goto(`${h.consoleUrl}/signin`);
  await page.getByTestId('signin-token').fill(token);
  await page.getByTestId('signin-submit').click();
  await page.waitForURL((url) => !url.pathname.startsWith('/signin'));
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
