import { makeRunLogDir, RUN_LOGS_ENV, sweepRunLogs } from './run-logs';

/**
 * Vitest global setup of the cluster tests and of the console's tests: makes the run's log
 * folder (run-logs.ts), which the test workers and the processes they spawn inherit through
 * the environment, and at the end of the run greps every process's log in it for every
 * secret any test registered. A secret found fails the run, naming the log file and what
 * the secret was; the folder is then kept for a look, and removed when the run is clean.
 * Both projects name this setup; in a run of both, the first makes the folder and sweeps
 * it, and the second finds it made and leaves it alone, so one folder holds every log.
 */
export default function setup(): () => void {
  if (process.env[RUN_LOGS_ENV]) return () => undefined;
  const dir = makeRunLogDir();
  process.env[RUN_LOGS_ENV] = dir;
  return () => {
    const problem = sweepRunLogs(dir);
    if (problem !== null) {
      // Vitest reports an error thrown here but still exits 0, so the run's exit code is set too.
      process.exitCode = 1;
      throw new Error(problem);
    }
  };
}
