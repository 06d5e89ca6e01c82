import { existsSync, readFileSync, rmSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { startEmbeddedPostgres } from './embedded';

/**
 * The PostgreSQL server a test run, the e2e run, the chaos soak or the bench works on.
 * They create and drop databases of their own on it, so it must be a server they may
 * write anything to, and they must not depend on one being installed.
 */

/** The machine's own PostgreSQL at its usual address, trust auth, as on a developer machine or in CI. */
export const DEFAULT_SERVER_URL = 'postgres://postgres@127.0.0.1:5432/postgres';

/** How long the default address may take to accept a TCP connection before it counts as silent. */
const PROBE_TIMEOUT_MS = 1_000;

export type ServerSource = 'DATABASE_URL' | 'default' | 'embedded';

export interface AcquiredServer {
  /** An admin URL: a database on a server where the caller may create and drop databases. */
  url: string;
  /** Where the server came from: the environment, the default address, or started here. */
  source: ServerSource;
  /** The embedded server's temporary data directory; null for the other sources. */
  dataDir: string | null;
  /** Stops an embedded server and removes its data directory; a no-op for the other sources. */
  release(): Promise<void>;
}

export interface AcquireServerOptions {
  /** Defaults to process.env; DATABASE_URL in it wins over everything but `embedded`. */
  env?: NodeJS.ProcessEnv;
  /** The address tried when DATABASE_URL is unset. Default DEFAULT_SERVER_URL. */
  defaultUrl?: string;
  /** Start an embedded server even when DATABASE_URL is set or the default address answers. */
  embedded?: boolean;
}

/**
 * DATABASE_URL when it is set; otherwise the server at the default address when something
 * answers there; otherwise a fresh embedded PostgreSQL in a temporary data directory, which
 * release() stops and removes. Should the process exit without calling release() (Ctrl-C, a
 * crash, process.exit), the server is stopped and its directory removed on the way out.
 */
export async function acquireServer(opts: AcquireServerOptions = {}): Promise<AcquiredServer> {
  const env = opts.env ?? process.env;
  const noop = async () => {};
  if (!opts.embedded) {
    if (env.DATABASE_URL) return { url: env.DATABASE_URL, source: 'DATABASE_URL', dataDir: null, release: noop };
    const defaultUrl = opts.defaultUrl ?? DEFAULT_SERVER_URL;
    if (await answers(defaultUrl)) return { url: defaultUrl, source: 'default', dataDir: null, release: noop };
  }
  return startTemporaryServer();
}

/** Whether anything accepts a TCP connection at the URL's host and port. */
export function answers(url: string): Promise<boolean> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: hostname, port: Number(port || 5432), timeout: PROBE_TIMEOUT_MS });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

const EXIT_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
/** How long a stopping server may take to be gone before its directory is removed anyway. */
const STOP_WAIT_MS = 5_000;

async function startTemporaryServer(): Promise<AcquiredServer> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'fenceline-pg-'));
  // As root the server runs as the `postgres` user, which must be able to enter the directory.
  await fs.chmod(dir, 0o755);
  const dataDir = path.join(dir, 'pg');

  // Registered before the server starts, so an interrupted start is cleaned up too.
  const onExit = () => removeNow(dataDir, dir);
  let removing = false;
  const onSignal = (signal: NodeJS.Signals) => {
    // When the process handles the signal itself (vitest, a graceful shutdown), it decides
    // when to exit, and may still need the server until then: the exit handler cleans up.
    if (removing || process.listenerCount(signal) > 1) return;
    // Otherwise Node's default would end the process without an 'exit' event, leaving the
    // server running: clean up, then die of the same signal. The cleanup does not block the
    // event loop, since a parent such as tsx's CLI kills a child that does not answer its
    // relayed signal at once. This listener stays until the end, so a second signal meanwhile
    // cannot end the process halfway.
    removing = true;
    void removeSoon(dataDir, dir).finally(() => {
      detach();
      process.kill(process.pid, signal);
    });
  };
  const detach = () => {
    process.off('exit', onExit);
    for (const signal of EXIT_SIGNALS) process.off(signal, onSignal);
  };
  process.on('exit', onExit);
  for (const signal of EXIT_SIGNALS) process.on(signal, onSignal);

  try {
    const server = await startEmbeddedPostgres({ dataDir });
    let releasing: Promise<void> | undefined;
    return {
      url: server.url,
      source: 'embedded',
      dataDir,
      release() {
        releasing ??= (async () => {
          try {
            await server.stop();
          } finally {
            detach();
            await fs.rm(dir, { recursive: true, force: true });
          }
        })();
        return releasing;
      },
    };
  } catch (error) {
    detach();
    removeNow(dataDir, dir);
    throw error;
  }
}

/**
 * Synchronous, for the exit handler: an immediate shutdown of the server (SIGQUIT: no
 * checkpoint, so nothing is written into the directory being removed), a short wait for it
 * to be gone, then the directory goes.
 */
function removeNow(dataDir: string, dir: string): void {
  const pid = quitServer(dataDir);
  const deadline = Date.now() + STOP_WAIT_MS;
  while (pid && isRunning(pid) && Date.now() < deadline) Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
  rmSync(dir, { recursive: true, force: true });
}

/** The same as removeNow, waiting without blocking the event loop. */
async function removeSoon(dataDir: string, dir: string): Promise<void> {
  const pid = quitServer(dataDir);
  const deadline = Date.now() + STOP_WAIT_MS;
  while (pid && isRunning(pid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  await fs.rm(dir, { recursive: true, force: true });
}

/** Asks the server of dataDir, if one runs, for an immediate shutdown; returns its pid. */
function quitServer(dataDir: string): number | undefined {
  const pid = postmasterPid(dataDir);
  if (pid) {
    try {
      process.kill(pid, 'SIGQUIT');
    } catch {
      // Already gone.
    }
  }
  return pid;
}

function postmasterPid(dataDir: string): number | undefined {
  try {
    const pid = Number(readFileSync(path.join(dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** Alive and not a zombie (the server is this process's child, and stays one until reaped). */
function isRunning(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    // With /proc, no stat file means no process; without it (macOS), only signal 0 can tell.
    if (existsSync('/proc/self')) return false;
    try {
      process.kill(pid, 0);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === 'EPERM';
    }
  }
}
