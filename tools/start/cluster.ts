import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, renameSync, type WriteStream } from 'node:fs';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** How long a worker lets its jobs finish on stop unless FENCELINE_SHUTDOWN_GRACE_MS says otherwise (the worker's own default). */
export const DEFAULT_SHUTDOWN_GRACE_MS = 30_000;

/**
 * What a stopping worker may take beyond its grace: handing back the jobs still running
 * and the last results' answers. The launcher waits the grace plus this before it kills.
 */
export const STOP_MARGIN_MS = 10_000;

/** Job and shard leases, ticks and sweeps in seconds instead of the production minutes. */
export const FAST_LEASES_ENV = {
  FENCELINE_LEASE_TTL_MS: '3000',
  FENCELINE_RENEW_INTERVAL_MS: '1000',
  FENCELINE_SHARD_LEASE_TTL_MS: '3000',
  FENCELINE_SHARD_RENEW_INTERVAL_MS: '1000',
  FENCELINE_TICK_INTERVAL_MS: '500',
  FENCELINE_SWEEP_INTERVAL_MS: '500',
};

/**
 * Short lease times for tests and the chaos soak, so expiries and takeovers happen within
 * seconds instead of the production minutes.
 */
export const FAST_TTL_ENV = {
  ...FAST_LEASES_ENV,
  FENCELINE_RECONCILE_INTERVAL_MS: '2000',
  FENCELINE_POLL_WAIT_MS: '5000',
  FENCELINE_WORKER_LIVE_WINDOW_MS: '15000',
  FENCELINE_SHARDS: '4',
};

export interface ProcessSpec {
  name: string;
  kind: 'scheduler' | 'worker' | 'console';
  env: Record<string, string>;
}

export interface ManagedProcess {
  name: string;
  kind: ProcessSpec['kind'];
  child: ChildProcess;
  /** The JSON log lines it printed, parsed (non-JSON lines are kept as {msg}). */
  logs: Record<string, unknown>[];
  exited: Promise<number | null>;
}

export interface ClusterOptions {
  databaseUrl: string;
  workerToken: string;
  schedulers: number;
  workers: number;
  workerSlots?: number;
  basePort: number;
  /** Extra environment for every process (TTL overrides in tests, for instance). */
  env?: Record<string, string>;
  /**
   * Where process output goes besides `logs`: 'prefixed' prints every line with the
   * process's name, 'quiet' keeps it, 'files' writes each process's lines to
   * `<logDir>/<name>.log` and prints only warnings, errors and stop messages, shortened.
   */
  output?: 'prefixed' | 'quiet' | 'files';
  logDir?: string;
  /**
   * Also copies every line of each process to the stream this returns for it (null for
   * none), whatever `output` is: the tests keep every process's log of a run this way.
   */
  tee?: (name: string) => NodeJS.WritableStream | null;
  tasksModule?: string;
  /** The workers' shutdown grace (FENCELINE_SHUTDOWN_GRACE_MS); stop() waits longer than it. */
  shutdownGraceMs?: number;
  /** How long each scheduler may take to answer /health on start; default 60 s. */
  startTimeoutMs?: number;
}

/**
 * Starts and stops the real processes of a cluster: scheduler nodes and workers, each
 * its own Node process running the TypeScript sources through tsx. `npm start` and the
 * integration tests both use it, so the tests exercise exactly what a user runs.
 */
export class Cluster {
  readonly procs = new Map<string, ManagedProcess>();

  constructor(readonly opts: ClusterOptions) {}

  schedulerUrl(i: number): string {
    return `http://127.0.0.1:${this.opts.basePort + i}`;
  }

  schedulerUrls(): string[] {
    return Array.from({ length: this.opts.schedulers }, (_, i) => this.schedulerUrl(i));
  }

  commonEnv(): Record<string, string> {
    // The fleet-wide worker token works only in development mode, which every cluster this
    // launcher starts uses unless its env says otherwise (FENCELINE_WORKER_AUTH=credentials).
    return { DATABASE_URL: this.opts.databaseUrl, FENCELINE_WORKER_AUTH: 'dev', FENCELINE_WORKER_TOKEN: this.opts.workerToken, ...this.opts.env };
  }

  async start(): Promise<void> {
    // One at a time: the first node takes every shard, and once workers poll them all the
    // nodes share the shards out (planShardShare).
    for (let i = 0; i < this.opts.schedulers; i++) {
      const proc = this.startScheduler(i);
      // A node that exits first (its port taken, say) must not be mistaken for one that
      // answers: another program may answer on that port.
      const exited = proc.exited.then((code) => {
        const last = proc.logs
          .slice(-3)
          .map((l) => String(l.msg ?? JSON.stringify(l)))
          .join(' | ');
        throw new Error(`${proc.name} exited (code ${code}) before it answered on ${this.schedulerUrl(i)}: ${last}`);
      });
      await Promise.race([waitForHttp(`${this.schedulerUrl(i)}/health`, this.opts.startTimeoutMs ?? 60_000), exited]);
      exited.catch(() => undefined);
    }
    for (let i = 0; i < this.opts.workers; i++) this.startWorker(i);
  }

  startScheduler(i: number): ManagedProcess {
    return this.spawn({
      name: `scheduler-${i + 1}`,
      kind: 'scheduler',
      env: { ...this.commonEnv(), FENCELINE_NODE_ID: `scheduler-${i + 1}`, FENCELINE_SCHEDULER_PORT: String(this.opts.basePort + i) },
    });
  }

  /** Starts worker `i`; `env` adds to (or overrides) its settings, e.g. the pool it serves. */
  startWorker(i: number, env: Record<string, string> = {}): ManagedProcess {
    return this.spawn({
      name: `worker-${i + 1}`,
      kind: 'worker',
      env: {
        ...this.commonEnv(),
        FENCELINE_WORKER_ID: `worker-${i + 1}`,
        FENCELINE_WORKER_SLOTS: String(this.opts.workerSlots ?? 4),
        FENCELINE_SCHEDULER_URLS: this.schedulerUrls().join(','),
        ...(this.opts.shutdownGraceMs !== undefined ? { FENCELINE_SHUTDOWN_GRACE_MS: String(this.opts.shutdownGraceMs) } : {}),
        ...(this.opts.tasksModule ? { FENCELINE_TASKS_MODULE: this.opts.tasksModule } : {}),
        ...env,
      },
    });
  }

  /**
   * Starts the console (a built Next.js app) on `port`. `next start` runs a child server,
   * so it gets its own process group and is stopped through the group.
   */
  startConsole(port: number, env: Record<string, string>): ManagedProcess {
    return this.spawn({
      name: 'console',
      kind: 'console',
      env: { ...this.commonEnv(), NEXT_TELEMETRY_DISABLED: '1', ...env },
      args: [join(REPO_ROOT, 'node_modules/next/dist/bin/next'), 'start', '-H', '127.0.0.1', '-p', String(port)],
      cwd: join(REPO_ROOT, 'apps/web'),
    });
  }

  spawn(spec: ProcessSpec & { args?: string[]; cwd?: string }): ManagedProcess {
    const entry = spec.kind === 'scheduler' ? 'apps/scheduler/src/main.ts' : 'apps/worker/src/main.ts';
    const child = spawn(process.execPath, spec.args ?? ['--import', 'tsx', join(REPO_ROOT, entry)], {
      cwd: spec.cwd ?? REPO_ROOT,
      env: { ...process.env, ...spec.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: spec.kind === 'console',
    });
    const logs: Record<string, unknown>[] = [];
    const file = this.opts.output === 'files' ? openLogFile(this.opts.logDir ?? join(REPO_ROOT, '.data', 'logs'), spec.name) : null;
    const tee = this.opts.tee?.(spec.name) ?? null;
    const onLine = (line: string, fromStderr: boolean): void => {
      tee?.write(line + '\n');
      let parsed: Record<string, unknown>;
      let json = true;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line };
        json = false;
      }
      logs.push(parsed);
      if (logs.length > 20_000) logs.splice(0, 5_000);
      if (file) {
        file.write(line + '\n');
        const short = terminalLine(parsed, json, fromStderr);
        if (short !== null) process.stdout.write(`[${spec.name}] ${short}\n`);
      } else if (this.opts.output !== 'quiet') process.stdout.write(`[${spec.name}] ${line}\n`);
    };
    createInterface({ input: child.stdout! }).on('line', (line) => onLine(line, false));
    createInterface({ input: child.stderr! }).on('line', (line) => onLine(line, true));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    if (file) void exited.then(() => file.end());
    // 'close' comes once the output is read to its end, which 'exit' may precede.
    if (tee) child.once('close', () => tee.end());
    const proc: ManagedProcess = { name: spec.name, kind: spec.kind, child, logs, exited };
    this.procs.set(spec.name, proc);
    return proc;
  }

  signal(name: string, signal: NodeJS.Signals): void {
    const proc = this.procs.get(name);
    if (!proc) throw new Error(`no process named ${name}`);
    kill(proc, signal);
  }

  /**
   * SIGKILLs whatever is still running, at once and synchronously: for a launcher's exit
   * hook, since a child process outlives its parent unless someone stops it.
   */
  killAll(): void {
    for (const p of this.procs.values()) if (p.child.exitCode == null && p.child.signalCode == null) kill(p, 'SIGKILL');
  }

  /**
   * SIGTERM every process (graceful), SIGKILL what is still running after its grace: for
   * workers their own shutdown grace plus STOP_MARGIN_MS (so a worker is never killed
   * while it may still finish or hand back a job), 10 s for the others. `graceMs` sets one
   * grace for every process instead.
   */
  async stop(graceMs?: number): Promise<void> {
    const workerGraceMs = graceMs ?? (this.opts.shutdownGraceMs ?? DEFAULT_SHUTDOWN_GRACE_MS) + STOP_MARGIN_MS;
    const live = [...this.procs.values()].filter((p) => p.child.exitCode == null && p.child.signalCode == null);
    // Workers first, so they hand back work while schedulers still answer.
    for (const kind of ['worker', 'console', 'scheduler'] as const) {
      const group = live.filter((p) => p.kind === kind);
      for (const p of group) {
        kill(p, 'SIGCONT');
        kill(p, 'SIGTERM');
      }
      await Promise.race([Promise.all(group.map((p) => p.exited)), sleep(kind === 'worker' ? workerGraceMs : (graceMs ?? 10_000))]);
      for (const p of group) if (p.child.exitCode == null && p.child.signalCode == null) kill(p, 'SIGKILL');
      // The console's server child may outlive the launcher; its group goes down with it.
      for (const p of group) if (p.kind === 'console') kill(p, 'SIGKILL');
    }
  }
}

/**
 * Opens `<dir>/<name>.log` for a new start, keeping the previous start's file as
 * `<name>.log.1`, so the logs of a start that went wrong survive the next one.
 */
function openLogFile(dir: string, name: string): WriteStream {
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${name}.log`);
  if (existsSync(path)) renameSync(path, `${path}.1`);
  return createWriteStream(path, { flags: 'w', mode: 0o600 });
}

/** Lifecycle messages worth a line in the terminal beside warnings and errors. */
const LIFECYCLE = new Set(['shutting down: taking no new work', 'shutting down: releasing shard leases', 'job handed back on stop', 'worker stopped']);

/**
 * The short, human form of a log line for the terminal, or null to keep it to the file:
 * warnings, errors and stop messages of the JSON logs ("warn: msg (key=value, ...)"), and
 * whatever a process wrote to stderr that is not JSON (a crash, say).
 */
export function terminalLine(entry: Record<string, unknown>, json: boolean, fromStderr: boolean): string | null {
  if (!json) return fromStderr && String(entry.msg).trim() !== '' ? String(entry.msg) : null;
  const level = String(entry.level ?? 'info');
  const msg = String(entry.msg ?? '');
  if (level !== 'warn' && level !== 'error' && !LIFECYCLE.has(msg)) return null;
  const skip = new Set(['time', 'level', 'msg', 'service', 'workerId', 'nodeId', 'stack']);
  const fields = Object.entries(entry)
    .filter(([k]) => !skip.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`)
    .join(', ');
  const line = `${level === 'info' ? '' : `${level}: `}${msg}${fields ? ` (${fields})` : ''}`;
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

/** Signals a process, or for the console its whole process group. */
function kill(proc: ManagedProcess, signal: NodeJS.Signals): void {
  try {
    if (proc.kind === 'console' && proc.child.pid) process.kill(-proc.child.pid, signal);
    else proc.child.kill(signal);
  } catch {
    // Already gone.
  }
}

export async function waitForHttp(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const res = await fetch(url);
      if (res.ok) return;
      last = new Error(`status ${res.status}`);
    } catch (err) {
      last = err;
    }
    await sleep(200);
  }
  throw new Error(`${url} did not answer within ${timeoutMs} ms: ${String(last)}`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
