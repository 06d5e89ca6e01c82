import { sleepConfigSchema } from '@fenceline/core';
import { NonRetryableError, type TaskContext } from '../task';

/** Waits for `durationMs`, or until the job is aborted. Used by demos, tests and benchmarks. */
export async function runSleep(config: Record<string, unknown>, ctx: TaskContext): Promise<unknown> {
  const parsed = sleepConfigSchema.safeParse(config);
  if (!parsed.success) throw new NonRetryableError(`sleep config is invalid: ${parsed.error.message}`);
  const { durationMs } = parsed.data;
  await new Promise<void>((resolve, reject) => {
    if (ctx.signal.aborted) return reject(ctx.signal.reason);
    const timer = setTimeout(resolve, durationMs);
    ctx.signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(ctx.signal.reason);
      },
      { once: true },
    );
  });
  return { sleptMs: durationMs };
}

export async function runNoop(): Promise<unknown> {
  return { ok: true };
}
