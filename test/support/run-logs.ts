import { appendFileSync, createWriteStream, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, type WriteStream } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The run's log folder: every process a test spawns writes a copy of its output there, and
 * every test that makes a secret (a worker credential, an API token, a password, a channel's
 * secret or URL) registers it, so the run's global teardown (log-sweep.ts) can grep every
 * process's log for every secret of the whole run. The cluster and console tests' vitest
 * run sets it (log-sweep.ts), and so does the browser tests' runner (e2e/run.ts); unset
 * otherwise, when nothing is copied or registered.
 */
export const RUN_LOGS_ENV = 'FENCELINE_TEST_RUN_LOGS';

const SECRETS_FILE = 'secrets.jsonl';
let opened = 0;

export function runLogDir(): string | undefined {
  return process.env[RUN_LOGS_ENV] || undefined;
}

/** A new file in the run's log folder for one process's output (named for it, unique in the run), or null outside a run. */
export function runLogFile(name: string): WriteStream | null {
  const dir = runLogDir();
  if (dir === undefined) return null;
  const file = `${name.replace(/[^A-Za-z0-9_.-]/g, '_')}-${process.pid}-${++opened}.log`;
  return createWriteStream(join(dir, file), { flags: 'a', mode: 0o600 });
}

/** Records a secret the run made, under a name that says what it is (the name, never the value, is what a failure prints). */
export function registerSecret(what: string, value: string): void {
  const dir = runLogDir();
  // Very short values would match by chance; no secret the tests make is that short.
  if (dir === undefined || value.length < 8) return;
  appendFileSync(join(dir, SECRETS_FILE), `${JSON.stringify({ what, value })}\n`, { mode: 0o600 });
}

/** Every log file of the folder that holds a registered secret, as `file: what`; empty when none does. */
export function secretsInLogs(dir: string): string[] {
  const secretsPath = join(dir, SECRETS_FILE);
  if (!existsSync(secretsPath)) return [];
  const secrets = readFileSync(secretsPath, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { what: string; value: string });
  const found: string[] = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith('.log'))) {
    const text = readFileSync(join(dir, file), 'utf8');
    for (const s of secrets) if (text.includes(s.value)) found.push(`${file}: ${s.what}`);
  }
  return found;
}

/** Makes a new run log folder; the caller puts it in RUN_LOGS_ENV for the processes of the run. */
export function makeRunLogDir(): string {
  return mkdtempSync(join(tmpdir(), 'fenceline-test-logs-'));
}

/**
 * The end of a run: greps every log of the folder for every secret registered in it. A
 * clean folder is removed and null returned; else it is kept for a look, and the message
 * names each log file and what the secret in it was (never the secret).
 */
export function sweepRunLogs(dir: string): string | null {
  const found = secretsInLogs(dir);
  if (found.length === 0) {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
  return `secrets found in process logs (kept in ${dir}):\n${found.join('\n')}`;
}

/**
 * Copies everything this process writes to the console or to its stdout and stderr into a
 * file of the run's log folder (nothing outside a run): for tests that run the console's
 * server code in the test process itself rather than in a process of its own.
 */
export function teeThisProcess(name: string): void {
  // A worker that runs several test files runs its setup for each: one copy is enough.
  const state = globalThis as { fencelineTestTee?: true };
  if (state.fencelineTestTee) return;
  const log = runLogFile(name);
  if (!log) return;
  state.fencelineTestTee = true;
  const copy = (chunk: unknown): void => void log.write(typeof chunk === 'string' || chunk instanceof Uint8Array ? chunk : String(chunk));
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      copy(`${args.map((a) => (typeof a === 'string' ? a : a instanceof Error ? (a.stack ?? a.message) : safeJson(a))).join(' ')}\n`);
      original(...args);
    };
  }
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    stream.write = ((chunk: unknown, ...rest: unknown[]) => {
      copy(chunk);
      return write(chunk, ...rest);
    }) as typeof stream.write;
  }
}

function safeJson(value: unknown): string {
  try {
    return JSON.stringify(value) ?? String(value);
  } catch {
    return String(value);
  }
}
