import { appendFileSync, createWriteStream, existsSync, readdirSync, readFileSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

/**
 * The run's log folder: every process a test spawns writes a copy of its output there, and
 * every test that makes a secret (a worker credential, an API token, a password, a channel's
 * secret or URL) registers it, so the run's global teardown (log-sweep.ts) can grep every
 * process's log for every secret of the whole run. Unset outside a vitest run of the
 * cluster tests, when nothing is copied or registered.
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
