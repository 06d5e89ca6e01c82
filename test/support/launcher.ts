import { spawn, type ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../../scripts/cluster';

/** `npm start` as a test runs it: scripts/start.ts in a process group standing for the terminal's. */
export interface Launch {
  proc: ChildProcess;
  /** Everything it printed so far (stdout and stderr). */
  output(): string;
  exited: Promise<number | null>;
  /** Resolves when every process sharing its output (the cluster's too) has ended. */
  ended: Promise<void>;
  /** Ctrl-C in the terminal: SIGINT to every process of the group at once. */
  interrupt(): void;
  /** SIGKILLs whatever of the group is left (for cleanup). */
  kill(): void;
}

/** Starts the launcher with `env` over this process's environment and `args` after the script. */
export function launch(env: Record<string, string>, args: string[] = []): Launch {
  const proc = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'scripts/start.ts'), ...args], {
    cwd: REPO_ROOT,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, FENCELINE_CONSOLE: '0', ...env },
  });
  let output = '';
  proc.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  proc.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => proc.once('exit', (code) => resolve(code)));
  const ended = new Promise<void>((resolve) => proc.stdout!.once('close', () => resolve()));
  const group = (signal: NodeJS.Signals): void => {
    try {
      process.kill(-proc.pid!, signal);
    } catch {
      // Already gone.
    }
  };
  return { proc, output: () => output, exited, ended, interrupt: () => group('SIGINT'), kill: () => group('SIGKILL') };
}

/** The exit code, or 'still running' after `ms`. */
export function exitWithin(l: Launch, ms: number): Promise<number | null | 'still running'> {
  return Promise.race([l.exited, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms))]);
}

/** A free base port with room for a few processes above it. */
export function freePortBase(): number {
  return 19_000 + Math.floor(Math.random() * 4_000) * 2;
}

/** Every line of every process log the launcher wrote under `<dataDir>/logs`. */
export async function processLogs(dataDir: string): Promise<{ name: string; lines: string[] }[]> {
  const dir = join(dataDir, 'logs');
  const names = (await readdir(dir)).filter((f) => f.endsWith('.log')).sort();
  return Promise.all(names.map(async (f) => ({ name: f.replace(/\.log$/, ''), lines: (await readFile(join(dir, f), 'utf8')).split('\n').filter(Boolean) })));
}
