import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { REPO_ROOT } from '../../tools/start/cluster';

/** `npm start` as a test runs it: tools/start/start.ts in a process group standing for the terminal's. */
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
  const proc = spawn(process.execPath, ['--import', 'tsx', join(REPO_ROOT, 'tools/start/start.ts'), ...args], {
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
/**
 * A base port whose next two ports are free too (npm start's two schedulers listen on the
 * base and the base + 1), found by binding each. Another test or service holding one of
 * them made a start fail before its banner, which a test then waited out.
 */
export async function freePortBase(): Promise<number> {
  for (;;) {
    const base = 19_000 + Math.floor(Math.random() * 4_000) * 2;
    if ((await portFree(base)) && (await portFree(base + 1)) && (await portFree(base + 2))) return base;
  }
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Waits for the banner, failing at once with what it printed if the launcher ends first. */
export async function bannerOf(l: Launch, timeoutMs = 120_000): Promise<void> {
  let exitCode: number | null | undefined;
  void l.exited.then((code) => (exitCode = code));
  const deadline = Date.now() + timeoutMs;
  while (!l.output().includes('fenceline is running')) {
    if (exitCode !== undefined) throw new Error(`npm start ended (exit ${String(exitCode)}) before its banner:\n${l.output()}`);
    if (Date.now() > deadline) throw new Error(`no banner within ${timeoutMs} ms:\n${l.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Every line of every process log the launcher wrote under `<dataDir>/logs`. */
export async function processLogs(dataDir: string): Promise<{ name: string; lines: string[] }[]> {
  const dir = join(dataDir, 'logs');
  const names = (await readdir(dir)).filter((f) => f.endsWith('.log')).sort();
  return Promise.all(names.map(async (f) => ({ name: f.replace(/\.log$/, ''), lines: (await readFile(join(dir, f), 'utf8')).split('\n').filter(Boolean) })));
}
