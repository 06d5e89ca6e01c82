import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RUN_LOGS_ENV, secretsInLogs } from './run-logs';

/**
 * Vitest global setup of the cluster tests: makes the run's log folder (run-logs.ts), which
 * the test workers and the processes they spawn inherit through the environment, and at
 * the end of the run greps every process's log in it for every secret any test
 * registered. A secret found fails the run, naming the log file and what the secret was;
 * the folder is then kept for a look, and removed when the run is clean.
 */
export default function setup(): () => void {
  const dir = mkdtempSync(join(tmpdir(), 'fenceline-test-logs-'));
  process.env[RUN_LOGS_ENV] = dir;
  return () => {
    const found = secretsInLogs(dir);
    if (found.length > 0) {
      // Vitest reports an error thrown here but still exits 0, so the run's exit code is set too.
      process.exitCode = 1;
      throw new Error(`secrets found in process logs (kept in ${dir}):\n${found.join('\n')}`);
    }
    rmSync(dir, { recursive: true, force: true });
  };
}
