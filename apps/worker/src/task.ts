import type { EffectRecord, RunParams } from '@fenceline/core';

/**
 * What a job handler receives besides its input. The fence is the job's fencing token:
 * hand it to any external sink you write to, and have the sink refuse a token lower than
 * the highest it has seen, because this worker may be paused past its lease at any moment.
 */
export interface TaskContext {
  /** The run's parameters: the trigger's values and the declared defaults (the defaults for a scheduled run). */
  params: RunParams;
  /**
   * The accepted outputs of the task's upstream tasks, by task id
   * (`(await ctx.upstream()).extract.output`): only results the result store accepted under
   * each upstream job's fence. Read from the scheduler on the first call and kept for the
   * rest of the job, so a handler that never asks costs no read; empty for a task without
   * dependencies.
   */
  upstream: () => Promise<UpstreamOutputs>;
  jobId: string;
  runId: string;
  dagId: string;
  taskId: string;
  attempt: number;
  fence: number;
  /**
   * The task's identity within its run (`dagId/runId/taskId`): the default key of its
   * effects (@fenceline/effects). It stays the same across retries and clears of the task,
   * whose fence keeps rising, so each attempt is fenced against the earlier ones.
   */
  effectKey: string;
  /**
   * Records how one of the job's effects ended (applied, already applied, or refused as
   * stale), sent with the job's result in the same request and shown on the console's run
   * page. The @fenceline/effects helpers call it themselves when handed this context; call
   * it for an effect you fence yourself. At most LIMITS.maxEffectsPerAttempt reports per
   * attempt; a report that is not well formed throws InvalidInputError naming its field.
   */
  reportEffect: (report: EffectRecord) => void;
  /** Aborted when the lease is lost (renewal refused or unreachable), on timeout, or on shutdown. */
  signal: AbortSignal;
  /**
   * Lines captured into the job's logs (bounded), and also printed by the worker. Each line
   * is also streamed while the job runs: the next renewal of the lease carries the lines
   * since the last one, so the console can tail the job live.
   */
  log: (message: string, fields?: Record<string, unknown>) => void;
  /**
   * Checks with the scheduler that this job's fence is still current, right before an
   * external side effect. Throws LeaseLostError / StaleFenceError if it is not.
   */
  checkFence: () => Promise<void>;
  /**
   * The job's W3C trace context, present when the scheduler or this worker traces: send it
   * as the `traceparent` header of your own calls and your services join the job's trace.
   */
  traceparent?: string;
}

/** A job's upstream outputs by task id. */
export type UpstreamOutputs = Record<string, { output: unknown }>;

export type TaskHandler = (input: Record<string, unknown>, ctx: TaskContext) => Promise<unknown>;

/** Thrown by a handler to fail without retrying (bad input, permanent refusal). */
export class NonRetryableError extends Error {
  override name = 'NonRetryableError';
}

const registry = new Map<string, TaskHandler>();

/** Registers a named job type. A DAG task with `type: name` runs `handler(task.config, ctx)`. */
export function defineTask(name: string, handler: TaskHandler): TaskHandler {
  if (['noop', 'sleep', 'shell', 'http'].includes(name)) throw new Error(`"${name}" is a built-in job type and cannot be redefined`);
  registry.set(name, handler);
  return handler;
}

export function registeredTask(name: string): TaskHandler | undefined {
  return registry.get(name);
}

export function registeredTaskNames(): string[] {
  return [...registry.keys()].sort();
}
