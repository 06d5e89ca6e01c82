import { EffectInputError } from './errors';

/**
 * What an effect needs from the job that makes it: the job's fence and its identity. A
 * fenceline `TaskContext` has all of these, so a task passes its `ctx` as it is.
 */
export interface EffectContext {
  dagId: string;
  runId: string;
  taskId: string;
  /** The fence of the job's current lease: it rises with every lease, clear and retry of the task. */
  fence: number;
  /** The worker's default key for the job's effects (`dagId/runId/taskId`); derived from the ids when absent. */
  effectKey?: string;
  /** Told of every effect's outcome, so the worker can report it with the job's result. */
  reportEffect?: (report: EffectReport) => void;
}

/**
 * How an effect ended:
 * - `applied`: it landed under this fence, now;
 * - `already-applied`: an earlier attempt of the same key applied it (once mode), so this
 *   attempt did nothing and the effect still happened exactly once;
 * - `stale`: a higher fence was already recorded for the key, so this attempt was refused
 *   and wrote nothing.
 */
export type EffectOutcome = 'applied' | 'already-applied' | 'stale';

export interface EffectReport {
  key: string;
  /** Which sink decided: `postgres`, `postgres-upsert`, `http` or `file`. */
  sink: string;
  outcome: EffectOutcome;
  /** The fence this attempt carried. */
  fence: number;
  /** The fence the effect was applied under when `already-applied`; the higher fence when `stale`. */
  recordedFence?: number;
}

/**
 * `once` (the default): the key's effect lands at most once; a later attempt finds it done
 * (`already-applied`) and an earlier attempt that wakes late is refused (`stale`).
 * `latest`: every attempt whose fence is at least the highest recorded applies again, for
 * effects that replace state rather than add to it.
 */
export type EffectMode = 'once' | 'latest';

export interface EffectOptions {
  /** The effect's key; defaults to the task's identity within its run (see effectKey). */
  key?: string;
  mode?: EffectMode;
}

/** The largest key the ledgers accept, in characters. */
export const MAX_EFFECT_KEY_CHARS = 1024;

/**
 * The default effect key: the task within its run. A clear or a retry of the task keeps the
 * key and raises the fence, so it is fenced against its own earlier attempts.
 */
export function effectKey(ctx: Pick<EffectContext, 'dagId' | 'runId' | 'taskId'>): string {
  return `${ctx.dagId}/${ctx.runId}/${ctx.taskId}`;
}

/** The key and mode of one effect, with the context's fence checked: bad input changes nothing. */
export function resolveEffect(ctx: EffectContext, options: EffectOptions = {}): { key: string; fence: number; mode: EffectMode } {
  if (!ctx || typeof ctx !== 'object') throw new EffectInputError('ctx', 'the job context is required (a TaskContext, or { dagId, runId, taskId, fence })');
  const fence = ctx.fence;
  if (!Number.isSafeInteger(fence) || fence < 0) throw new EffectInputError('ctx.fence', `must be a whole number of at least 0, got ${String(fence)}`);
  const key = options.key ?? ctx.effectKey ?? effectKey(ctx);
  if (typeof key !== 'string' || key.length === 0) throw new EffectInputError('key', 'must be a non-empty string');
  if (key.length > MAX_EFFECT_KEY_CHARS) throw new EffectInputError('key', `must be at most ${MAX_EFFECT_KEY_CHARS} characters`);
  if (key.includes('\0')) throw new EffectInputError('key', 'must not contain the NUL character');
  const mode = options.mode ?? 'once';
  if (mode !== 'once' && mode !== 'latest') throw new EffectInputError('mode', `must be "once" or "latest", got ${String(mode)}`);
  return { key, fence, mode };
}

/** Tells the context of an outcome; a reporter that throws does not undo the effect. */
export function report(ctx: EffectContext, r: EffectReport): void {
  try {
    ctx.reportEffect?.(r);
  } catch {
    // The effect has already landed or been refused; a broken reporter must not change that.
  }
}
