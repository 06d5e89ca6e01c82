import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

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
  /** Where process output goes besides `logs`: inherit prints it prefixed, 'quiet' keeps it. */
  output?: 'prefixed' | 'quiet';
  tasksModule?: string;
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
    return { DATABASE_URL: this.opts.databaseUrl, FENCELINE_WORKER_TOKEN: this.opts.workerToken, ...this.opts.env };
  }

  async start(): Promise<void> {
    // One at a time: the first node takes every shard, and once workers poll them all the
    // nodes share the shards out (planShardShare).
    for (let i = 0; i < this.opts.schedulers; i++) {
      this.startScheduler(i);
      await waitForHttp(`${this.schedulerUrl(i)}/health`, 60_000);
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

  startWorker(i: number): ManagedProcess {
    return this.spawn({
      name: `worker-${i + 1}`,
      kind: 'worker',
      env: {
        ...this.commonEnv(),
        FENCELINE_WORKER_ID: `worker-${i + 1}`,
        FENCELINE_WORKER_SLOTS: String(this.opts.workerSlots ?? 4),
        FENCELINE_SCHEDULER_URLS: this.schedulerUrls().join(','),
        ...(this.opts.tasksModule ? { FENCELINE_TASKS_MODULE: this.opts.tasksModule } : {}),
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
    const onLine = (line: string): void => {
      let parsed: Record<string, unknown>;
      try {
        parsed = JSON.parse(line) as Record<string, unknown>;
      } catch {
        parsed = { msg: line };
      }
      logs.push(parsed);
      if (logs.length > 20_000) logs.splice(0, 5_000);
      if (this.opts.output !== 'quiet') process.stdout.write(`[${spec.name}] ${line}\n`);
    };
    createInterface({ input: child.stdout! }).on('line', onLine);
    createInterface({ input: child.stderr! }).on('line', onLine);
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
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

  /** SIGTERM every process (graceful), SIGKILL what is still running after the grace. */
  async stop(graceMs = 10_000): Promise<void> {
    const live = [...this.procs.values()].filter((p) => p.child.exitCode == null && p.child.signalCode == null);
    // Workers first, so they hand back work while schedulers still answer.
    for (const kind of ['worker', 'console', 'scheduler'] as const) {
      const group = live.filter((p) => p.kind === kind);
      for (const p of group) {
        kill(p, 'SIGCONT');
        kill(p, 'SIGTERM');
      }
      await Promise.race([Promise.all(group.map((p) => p.exited)), sleep(graceMs)]);
      for (const p of group) if (p.child.exitCode == null && p.child.signalCode == null) kill(p, 'SIGKILL');
      // The console's server child may outlive the launcher; its group goes down with it.
      for (const p of group) if (p.kind === 'console') kill(p, 'SIGKILL');
    }
  }
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
