import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { report, resolveEffect, type EffectContext, type EffectOptions } from '../context';
import { decide, recordAfter, type RecordedFence } from '../decide';
import { EffectInputError } from '../errors';

export interface FencedWriteOptions extends EffectOptions {
  /** How long to wait for the path's lock before giving up; default 30 s. */
  lockTimeoutMs?: number;
  /**
   * The clock the lock's wait is measured on, in milliseconds; default `Date.now`. A
   * worker that runs on a clock of its own passes it here, so the wait is timed as the
   * rest of its work is.
   */
  nowMs?: () => number;
}

export type FencedWriteResult = { outcome: 'applied' | 'already-applied' | 'stale'; key: string; fence: number; recordedFence?: number };

/**
 * Writes `data` to `path` under the job's fence. The data goes to a temporary file in the
 * same directory first; then, holding the path's lock (`<path>.lock`, a directory), the
 * fences recorded for the path (`<path>.fences`, a JSON file by effect key) are read, and
 * the temporary file is renamed over `path` only while no higher fence is recorded for the
 * key (and, in once mode, no earlier attempt applied it). Readers see the old file or the
 * new one, never a part.
 *
 * A lock left by a process that died is taken over; one held by a live process (a paused
 * worker among them) is waited for, so a holder that wakes up still finishes alone.
 */
export async function fencedWriteFile(path: string, data: string | Uint8Array, ctx: EffectContext, options: FencedWriteOptions = {}): Promise<FencedWriteResult> {
  const { key, fence, mode } = resolveEffect(ctx, options);
  if (typeof path !== 'string' || path.length === 0) throw new EffectInputError('path', 'must be a file path');
  const nowMs = options.nowMs ?? Date.now;
  if (typeof nowMs !== 'function') throw new EffectInputError('nowMs', 'must be a function returning milliseconds');
  const lockTimeoutMs = options.lockTimeoutMs ?? 30_000;
  if (!Number.isFinite(lockTimeoutMs) || lockTimeoutMs < 0)
    throw new EffectInputError('lockTimeoutMs', `must be a number of milliseconds of at least 0, got ${String(lockTimeoutMs)}`);
  const temp = join(dirname(path), `.${basename(path)}.${fence}.${randomBytes(6).toString('hex')}.tmp`);
  await writeDurably(temp, data);
  let result: FencedWriteResult;
  try {
    result = await withPathLock(path, lockTimeoutMs, nowMs, async () => {
      const fences = await readFences(path);
      const recorded = fences[key] ?? null;
      const outcome = decide(recorded, fence, mode);
      if (outcome === 'stale') return { outcome, key, fence, recordedFence: recorded!.fence };
      // The record goes first: a crash between the two renames leaves a higher fence
      // recorded and the old data, which a retry of this fence or a higher one repairs.
      fences[key] = recordAfter(recorded, fence, outcome);
      await writeFences(path, fences);
      if (outcome === 'already-applied') return { outcome, key, fence, recordedFence: recorded!.appliedFence! };
      await rename(temp, path);
      return { outcome, key, fence };
    });
  } finally {
    await rm(temp, { force: true });
  }
  report(ctx, { key, sink: 'file', outcome: result.outcome, fence, ...(result.recordedFence !== undefined ? { recordedFence: result.recordedFence } : {}) });
  return result;
}

/** The fences recorded for `path`, by effect key. */
export async function readFences(path: string): Promise<Record<string, RecordedFence>> {
  try {
    return JSON.parse(await readFile(`${path}.fences`, 'utf8')) as Record<string, RecordedFence>;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw err;
  }
}

async function writeFences(path: string, fences: Record<string, RecordedFence>): Promise<void> {
  const temp = `${path}.fences.${randomBytes(6).toString('hex')}.tmp`;
  await writeDurably(temp, JSON.stringify(fences));
  await rename(temp, `${path}.fences`);
}

async function writeDurably(path: string, data: string | Uint8Array): Promise<void> {
  const handle = await open(path, 'wx');
  try {
    await handle.writeFile(data);
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function withPathLock<T>(path: string, timeoutMs: number, nowMs: () => number, body: () => Promise<T>): Promise<T> {
  const lock = `${path}.lock`;
  const deadline = nowMs() + timeoutMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 100)) {
    try {
      await mkdir(lock);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    if (await holderDied(lock)) continue;
    if (nowMs() > deadline) throw new Error(`${path}: its lock ${lock} is still held after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, wait));
  }
  try {
    await writeFile(join(lock, 'owner'), String(process.pid));
    return await body();
  } finally {
    await rm(join(lock, 'owner'), { force: true });
    await rmdir(lock).catch(() => undefined);
  }
}

/** Removes the lock of a process that no longer exists; a lock whose owner is not yet written is left alone. */
async function holderDied(lock: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number(await readFile(join(lock, 'owner'), 'utf8'));
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') return false;
  }
  // Renamed away first, so two waiters cannot both remove it and both enter.
  const taken = `${lock}.${randomBytes(6).toString('hex')}.dead`;
  try {
    await rename(lock, taken);
  } catch {
    return false;
  }
  await rm(taken, { recursive: true, force: true });
  return true;
}
