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

/**
 * Reports what a job is handed: the run's params and the accepted outputs of its upstream
 * tasks (examples/params-report.yaml chains two of them).
 */
defineTask('summarize', async (_input, ctx) => {
  const upstream = Object.fromEntries(Object.entries(ctx.upstream).map(([taskId, u]) => [taskId, u.output]));
  ctx.log(`params ${JSON.stringify(ctx.params)}; upstream tasks ${Object.keys(upstream).join(', ') || 'none'}`);
  return { task: ctx.taskId, params: ctx.params, upstream };
});
