import postgres from 'postgres';
import { defineTask, NonRetryableError, type TaskContext } from '@fenceline/worker';
import { fencedTransaction } from '@fenceline/effects';
import '../../../examples/tasks';

/**
 * The chaos soak's tasks module: the examples' tasks, plus two job types that make an
 * effect outside the scheduler, the same work with and without @fenceline/effects. Each
 * job works a while (a worker paused now wakes up past its lease), then writes one row to
 * the user's table and calls the user's service. Neither checks `ctx.signal`: task code
 * that is busy writing does not, and that is what the helpers are for.
 */
const userDb = process.env.FENCELINE_CHAOS_USER_DB;
const serviceUrl = process.env.FENCELINE_CHAOS_SERVICE_URL;
const sql = userDb ? postgres(userDb, { max: 2, onnotice: () => undefined, connect_timeout: 5 }) : null;

function settings(input: Record<string, unknown>): { workMs: number } {
  if (!sql || !serviceUrl) throw new NonRetryableError('FENCELINE_CHAOS_USER_DB and FENCELINE_CHAOS_SERVICE_URL must be set');
  const workMs = Number(input.workMs ?? 1000);
  if (!Number.isInteger(workMs) || workMs < 0 || workMs > 60_000) throw new NonRetryableError('workMs must be a whole number of milliseconds from 0 to 60000');
  return { workMs };
}

const work = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function callService(route: 'guarded' | 'naive', ctx: TaskContext): Promise<number> {
  const res = await fetch(`${serviceUrl}/${route}`, {
    method: 'POST',
    headers: { 'x-fenceline-fence': String(ctx.fence), 'x-fenceline-effect-key': ctx.effectKey },
  });
  await res.arrayBuffer();
  return res.status;
}

defineTask('effect-guarded', async (input, ctx) => {
  const { workMs } = settings(input);
  await work(workMs);
  const row = await fencedTransaction(
    sql!,
    ctx,
    async (tx) => {
      await tx`insert into effects (key, fence, mode) values (${ctx.effectKey}, ${ctx.fence}, 'guarded')`;
    },
    { table: 'effects_ledger' },
  );
  const status = await callService('guarded', ctx);
  // 409: a later attempt reached the service first; this attempt's lease is gone.
  if (status !== 200 && status !== 409) throw new Error(`the service answered ${status}`);
  return { database: row.outcome, service: status };
});

defineTask('effect-naive', async (input, ctx) => {
  const { workMs } = settings(input);
  await work(workMs);
  await sql!`insert into effects (key, fence, mode) values (${ctx.effectKey}, ${ctx.fence}, 'naive')`;
  const status = await callService('naive', ctx);
  if (status !== 200) throw new Error(`the service answered ${status}`);
  return { service: status };
});
