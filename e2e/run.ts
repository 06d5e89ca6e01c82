import { spawn, spawnSync } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { acquireServer } from '@fenceline/db';
import { makeRunLogDir, RUN_LOGS_ENV, sweepRunLogs } from '../test/support/run-logs';
import { missingChromium } from './src/chromium';

/**
 * npm run test:e2e [-- file.test.ts ...]
 *
 * Checks that Chromium is there, builds the console, finds or starts one PostgreSQL for the
 * whole run (DATABASE_URL, else the server on 127.0.0.1:5432, else an embedded one that is
 * removed afterwards) and runs the browser test files one after another under node:test.
 * Every process the tests start (schedulers, workers, the console) copies its output into
 * the run's log folder, and the tests register the secrets they make (test/support/run-logs.ts);
 * once the tests are done, every log is grepped for every secret, and one found fails the
 * run, as the cluster tests' teardown does.
 */
const E2E_DIR = dirname(fileURLToPath(import.meta.url));
const REPO_ROOT = join(E2E_DIR, '..');
const DEFAULT_FILES = [
  'ports.test.ts',
  'signin.test.ts',
  'drawn-dag.test.ts',
  'fair-share.test.ts',
  'failover.test.ts',
  'simulator.test.ts',
  'dag-list.test.ts',
  'pages.test.ts',
  'mobile.test.ts',
  'editor.test.ts',
  'runs.test.ts',
  'trigger-params.test.ts',
  'accessibility.test.ts',
  'keyboard.test.ts',
  'run-actions.test.ts',
  'backfill.test.ts',
  'runs-list.test.ts',
  'api-reference.test.ts',
  'pools-limits.test.ts',
  'notifications.test.ts',
  'run-grid.test.ts',
  'run-effects.test.ts',
];

async function main(): Promise<number> {
  const problem = missingChromium();
  if (problem) {
    process.stderr.write(`${problem}\n`);
    return 1;
  }
  const files = process.argv.slice(2);
  const build = spawnSync('npm', ['run', 'build', '-w', '@fenceline/web'], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (build.status !== 0) return build.status ?? 1;

  const server = await acquireServer();
  if (server.source === 'embedded') console.log(`e2e: no DATABASE_URL and no PostgreSQL at 127.0.0.1:5432: started an embedded one at ${server.url}`);
  const logs = makeRunLogDir();
  try {
    const args = ['--import', 'tsx', '--test', '--test-concurrency=1', '--test-timeout=600000', ...(files.length > 0 ? files : DEFAULT_FILES.map((f) => join(E2E_DIR, f)))];
    const child = spawn(process.execPath, args, { cwd: REPO_ROOT, stdio: 'inherit', env: { ...process.env, DATABASE_URL: server.url, [RUN_LOGS_ENV]: logs } });
    // Passed on, so the tests stop their clusters before the server goes; the exit code tells.
    const forward = (signal: NodeJS.Signals) => child.kill(signal);
    process.on('SIGINT', forward);
    process.on('SIGTERM', forward);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (c, s) => resolve([c, s])));
    const leaked = sweepRunLogs(logs);
    if (leaked !== null) {
      process.stderr.write(`e2e: ${leaked}\n`);
      return 1;
    }
    return code ?? 128 + (signal ? constants.signals[signal] : 0);
  } finally {
    await server.release();
  }
}

main().then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`e2e: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exit(1);
  },
);
