import { effectsProblem, InvalidInputError, LIMITS, NO_TRACING, storedEffects, TooLargeError, traceLogFields, type EffectRecord, type Tracing } from '@fenceline/core';
import { type Assignment } from '@fenceline/core/engine';
import { WorkerCore, type JobControl, type JobEnd, type WorkerStats } from '@fenceline/core/worker';
import { HttpTransport } from './transport';
import { runHttp } from './handlers/http';
import { runShell } from './handlers/shell';
import type { WorkerConfig } from './config';
import { runNoop, runSleep } from './handlers/sleep';
import { NonRetryableError, registeredTask, registeredTaskNames, type TaskContext, type UpstreamOutputs } from './task';

/**
 * The job's upstream outputs, read when its handler first asks for them. Outputs too large
 * to hand over fail the job for good: another attempt would be handed the same outputs.
 */
async function upstreamFor(control: JobControl): Promise<UpstreamOutputs> {
  try {
    return await control.upstream();
  } catch (err) {
    if (err instanceof TooLargeError) throw new NonRetryableError(err.message);
    throw err;
  }
}

/**
 * One effect report, checked as the store will check it, so a bad one is refused where it
 * is made (with the field it names) rather than cost the job its result.
 */
function checkedEffect(jobId: string, report: EffectRecord, reported: number): EffectRecord {
  if (reported >= LIMITS.maxEffectsPerAttempt) {
    throw new InvalidInputError(`effects: an attempt may report at most ${LIMITS.maxEffectsPerAttempt} effects (LIMITS.maxEffectsPerAttempt)`, {
      jobId,
      field: 'effects',
      limit: LIMITS.maxEffectsPerAttempt,
    });
  }
  const problem = effectsProblem(jobId, [report]);
  if (problem !== null)
    throw new InvalidInputError(problem.message.replace(/^effects\.0/, 'report'), { jobId, field: String(problem.details.field).replace(/^effects\.0/, 'report') });
  return storedEffects([report])![0]!;
}

/** The worker's settings (see config.ts) plus where its log lines go. */
export type WorkerOptions = Omit<WorkerConfig, 'tasksModule' | 'requestTimeoutMs'> & {
  /** A request's deadline (FENCELINE_REQUEST_TIMEOUT_MS); 30 s when absent. */
  requestTimeoutMs?: number;
  log: (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
  /** Where the spans of its jobs and their HTTP calls go; none when absent. */
  tracing?: Tracing;
};

const MAX_LOG_CHARS = 64 * 1024;

/**
 * A worker process: the worker core (@fenceline/core's WorkerCore, which decides what to
 * poll, when to renew, when a lease is lost, how results are batched and what a stop
 * hands back) bound to HTTP, the machine's clock and timers, and the job handlers.
 */
export class Worker {
  private readonly core: WorkerCore;

  constructor(private readonly opts: WorkerOptions) {
    if (opts.schedulerUrls.length === 0) throw new Error('at least one scheduler URL is required');
    this.core = new WorkerCore({
      workerId: opts.workerId,
      slots: opts.slots,
      // Nodes route to it only the jobs of its pool, with its labels, of the types it runs.
      offer: { pool: opts.pool, labels: opts.labels, types: this.jobTypes() },
      clock: { nowMs: () => Date.now() },
      timers: {
        after: (delayMs, fn) => {
          const t = setTimeout(fn, delayMs);
          return () => clearTimeout(t);
        },
      },
      // Results that finish in the same pass of the event loop share the first request.
      defer: (fn) => void setImmediate(fn),
      transport: new HttpTransport(opts.schedulerUrls, opts.token, () => ({ pid: process.pid, jobTypes: this.jobTypes() }), opts.requestTimeoutMs),
      executor: { run: (job, control) => this.run(job, control) },
      pollWaitMs: opts.pollWaitMs,
      shutdownGraceMs: opts.shutdownGraceMs,
      log: opts.log,
      tracing: opts.tracing ?? NO_TRACING,
    });
  }

  get stats(): WorkerStats {
    return this.core.stats;
  }

  /** Slots not taken by a job at work (a job whose result is being written no longer counts). */
  get free(): number {
    return this.core.free;
  }

  /** Resolves once any scheduler node has accepted the registration. */
  start(): Promise<void> {
    return this.core.start();
  }

  /** Takes no new work and empties the slots within the shutdown grace (see WorkerCore.stop). */
  stop(): Promise<void> {
    return this.core.stop();
  }

  /** Runs one job's handler, capturing its log lines (bounded) for its result and streaming them while it runs. */
  private async run(job: Assignment, control: JobControl): Promise<JobEnd> {
    const logs: string[] = [];
    let logChars = 0;
    const effects: EffectRecord[] = [];
    // Read on the first call only: most handlers never look, and each read is a round trip
    // to a node and a store read.
    let upstream: Promise<UpstreamOutputs> | null = null;
    const ctx: TaskContext = {
      jobId: job.jobId,
      runId: job.runId,
      dagId: job.dagId,
      taskId: job.taskId,
      attempt: job.attempt,
      fence: job.fence,
      effectKey: `${job.dagId}/${job.runId}/${job.taskId}`,
      params: job.params,
      upstream: () => (upstream ??= upstreamFor(control)),
      // Read on first use: the job's stop switch is made only for a handler that looks.
      get signal() {
        return control.signal;
      },
      ...(control.traceparent ? { traceparent: control.traceparent } : {}),
      log: (message, fields) => {
        const line = fields ? `${message} ${JSON.stringify(fields)}` : message;
        this.opts.log('info', line, { jobId: job.jobId, taskId: job.taskId, job_id: job.jobId, run_id: job.runId, ...traceLogFields(control.traceparent) });
        // Streamed live with the lease's next renewal, and kept for the result.
        control.log(line);
        if (logChars + line.length > MAX_LOG_CHARS) return;
        logs.push(line);
        logChars += line.length + 1;
      },
      checkFence: control.checkFence,
      reportEffect: (report) => effects.push(checkedEffect(job.jobId, report, effects.length)),
    };
    const captured = (): string | null => logs.join('\n') || null;
    // Left out when none were reported, so a job without effects sends what it always did.
    const reported = (): { effects?: EffectRecord[] } => (effects.length > 0 ? { effects } : {});
    try {
      const output = await this.handlerFor(job.task.type)(job.task.config, ctx);
      return { ok: true, output, logs: captured(), ...reported() };
    } catch (err) {
      return { ok: false, error: err, retryable: !(err instanceof NonRetryableError), logs: captured(), ...reported() };
    }
  }

  /**
   * The job types this worker runs, sent when it registers so the console can say when no
   * live worker runs a type (shell is off unless allowed; named types come from the tasks module).
   */
  private jobTypes(): string[] {
    return ['noop', 'sleep', 'http', ...(this.opts.shell.allowed ? ['shell'] : []), ...registeredTaskNames()];
  }

  private handlerFor(type: string): (config: Record<string, unknown>, ctx: TaskContext) => Promise<unknown> {
    switch (type) {
      case 'noop':
        return runNoop;
      case 'sleep':
        return runSleep;
      case 'http':
        return (config, ctx) => runHttp(config, ctx, this.opts.tracing);
      case 'shell':
        return (config, ctx) => runShell(config, ctx, this.opts.shell);
      default: {
        const handler = registeredTask(type);
        if (!handler) return async () => Promise.reject(new NonRetryableError(`no handler for job type "${type}" on this worker`));
        return handler;
      }
    }
  }
}
