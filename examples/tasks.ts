import { defineTask, NonRetryableError } from '@fenceline/worker';

/**
 * Named job types for the examples. A worker loads this module when started with
 * FENCELINE_TASKS_MODULE=examples/tasks.ts (npm start does).
 */
defineTask('flaky', async (input, ctx) => {
  const succeedOnAttempt = Number(input.succeedOnAttempt ?? 2);
  if (!Number.isInteger(succeedOnAttempt) || succeedOnAttempt < 1) throw new NonRetryableError('succeedOnAttempt must be a positive integer');
  ctx.log(`attempt ${ctx.attempt} of a task that succeeds on attempt ${succeedOnAttempt}`);
  if (ctx.attempt < succeedOnAttempt) throw new Error(`simulated failure on attempt ${ctx.attempt}`);
  return { attempt: ctx.attempt, fence: ctx.fence };
});

/** Logs `lines` lines, one every `everyMs`: a job whose output can be watched while it runs. */
defineTask('ticker', async (input, ctx) => {
  const lines = Number(input.lines ?? 10);
  const everyMs = Number(input.everyMs ?? 1000);
  if (!Number.isInteger(lines) || lines < 1 || lines > 10_000) throw new NonRetryableError('lines must be a whole number from 1 to 10000');
  if (!Number.isInteger(everyMs) || everyMs < 1 || everyMs > 60_000) throw new NonRetryableError('everyMs must be a whole number of milliseconds from 1 to 60000');
  for (let i = 1; i <= lines; i++) {
    ctx.log(`tick ${i} of ${lines}`);
    if (i < lines) await new Promise((resolve) => setTimeout(resolve, everyMs));
    ctx.signal.throwIfAborted();
  }
  return { lines };
});

/**
 * Reports what a job is handed: the run's params and the accepted outputs of its upstream
 * tasks (examples/params-report.yaml chains two of them).
 */
defineTask('summarize', async (_input, ctx) => {
  const upstream = Object.fromEntries(Object.entries(await ctx.upstream()).map(([taskId, u]) => [taskId, u.output]));
  ctx.log(`params ${JSON.stringify(ctx.params)}; upstream tasks ${Object.keys(upstream).join(', ') || 'none'}`);
  return { task: ctx.taskId, params: ctx.params, upstream };
});
