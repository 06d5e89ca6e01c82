import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT } from '../../tools/start/cluster';
import { runLogFile } from './run-logs';

const TSX_LOADER = pathToFileURL(join(REPO_ROOT, 'node_modules/tsx/dist/loader.mjs')).href;
const CLI = join(REPO_ROOT, 'apps/cli/src/cli.ts');

export interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the real `fenceline` CLI process with exactly this environment, and collects what it printed. */
export async function spawnCli(env: NodeJS.ProcessEnv, args: string[]): Promise<CliOutcome> {
  const child = spawn(process.execPath, ['--import', TSX_LOADER, CLI, ...args], { cwd: REPO_ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  // What the CLI logs is its stderr (its stdout is its answer, a credential it was asked to make among them).
  const log = runLogFile('cli');
  if (log) {
    child.stderr.on('data', (chunk: Buffer) => log.write(chunk));
    child.once('close', () => log.end());
  }
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  return { code, stdout, stderr };
}

/** Runs the real `fenceline` CLI process against `databaseUrl`, as an operator would. */
export function runCli(databaseUrl: string, ...args: string[]): Promise<CliOutcome> {
  return spawnCli({ ...process.env, DATABASE_URL: databaseUrl }, args);
}
