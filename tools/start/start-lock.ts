import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { DATA_DIR } from '@fenceline/cli/cluster-file';

/**
 * The lock that keeps one `npm start` per data folder. A second start in the same folder
 * used to re-apply the examples, bind ports already taken, take every shard and overwrite
 * cluster.json with a dead pid; now it reads this file, finds the first one alive and
 * refuses before it touches anything.
 *
 * The file names the launcher in the terminal and, once it has started, the process that
 * runs the cluster: the start is alive while either is. A file whose processes are all
 * gone (a start that was killed) is stale and is taken over.
 */
export interface StartLock {
  /** The launcher the user started (the terminal's process). */
  pid: number;
  /** The process that runs the cluster, once started. */
  clusterPid?: number;
  consoleUrl?: string;
  startedAt: string;
}

export const LOCK_FILE = join(DATA_DIR, 'start.lock');

/** Why a start was refused: another start of this folder is alive. */
export class AlreadyRunningError extends Error {
  constructor(readonly holder: StartLock) {
    const where = holder.consoleUrl ? `console ${holder.consoleUrl}` : holder.clusterPid ? 'console not started' : 'still starting';
    super(
      `fenceline is already running from ${DATA_DIR} (pid ${holder.pid}, ${where}); stop it with Ctrl-C in its terminal or \`kill ${holder.pid}\`, or set FENCELINE_DATA_DIR to start another one`,
    );
  }
}

/**
 * Takes the lock for this process, or throws AlreadyRunningError naming the live holder.
 * The file is created exclusively, so two starts at the same instant cannot both win.
 */
export function takeStartLock(): void {
  mkdirSync(DATA_DIR, { recursive: true });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(LOCK_FILE, 'wx', 0o600);
      writeSync(fd, JSON.stringify({ pid: process.pid, startedAt: new Date().toISOString() } satisfies StartLock) + '\n');
      closeSync(fd);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readStartLock();
    if (holder && (isStartAlive(holder.pid) || (holder.clusterPid !== undefined && isStartAlive(holder.clusterPid)))) throw new AlreadyRunningError(holder);
    // Stale (or unreadable, from a start killed while writing it): take it over.
    rmSync(LOCK_FILE, { force: true });
  }
  throw new Error(`could not take ${LOCK_FILE}: another start keeps replacing it`);
}

/** Adds what the running start knows about itself once it is up. */
export function updateStartLock(fields: Pick<StartLock, 'clusterPid' | 'consoleUrl'>): void {
  const lock = readStartLock();
  if (!lock) return;
  writeFileSync(LOCK_FILE, JSON.stringify({ ...lock, ...fields }) + '\n', { mode: 0o600 });
}

/** Removes the lock if it is this launcher's. */
export function releaseStartLock(): void {
  if (readStartLock()?.pid === process.pid) rmSync(LOCK_FILE, { force: true });
}

export function readStartLock(): StartLock | null {
  try {
    const value = JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as StartLock;
    return Number.isInteger(value.pid) ? value : null;
  } catch {
    return null;
  }
}

/**
 * True if `pid` is a live process that runs the start script. A pid is reused once its
 * process is gone, so where the command line can be read (Linux), a live process that is
 * not a start does not count.
 */
function isStartAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    // EPERM: it exists but belongs to someone else.
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('start.ts');
  } catch {
    return true;
  }
}
