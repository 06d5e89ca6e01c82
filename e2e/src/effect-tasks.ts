import postgres from 'postgres';
import { defineTask } from '@fenceline/worker';
import { fencedTransaction } from '@fenceline/effects';

/**
 * The job type of the run-effects browser test: `e2e-effect` writes one row to the user's
 * table `effect_rows` through the fenced transaction helper, handing it the job's context
 * so its outcome travels with the job's result to the run page. Every attempt also notes
 * what it saw in `effect_seen`, outside the fence, so the test can tell what a fenced-out
 * attempt (whose result the store refuses) was told by the sink.
 *
 * config: `url` the user's database; `key` an effect key other than the task's own;
 * `holdMs` how long the first lease (fence 1) waits before its effect (the test pauses its worker
 * meanwhile); `failFirst` fail the first attempt before any effect, so it is retried.
 */
const pools = new Map<string, postgres.Sql>();

function db(url: string): postgres.Sql {
  let sql = pools.get(url);
  if (!sql) pools.set(url, (sql = postgres(url, { max: 2, onnotice: () => undefined })));
  return sql;
}

defineTask('e2e-effect', async (input, ctx) => {
  const sql = db(String(input.url));
  await sql`insert into effect_seen (task_id, fence, what) values (${ctx.taskId}, ${ctx.fence}, 'started')`;
  if (input.failFirst === true && ctx.attempt === 1) throw new Error('the first attempt fails before its effect');
  if (ctx.fence === 1 && Number(input.holdMs ?? 0) > 0) await new Promise((resolve) => setTimeout(resolve, Number(input.holdMs)));
  const r = await fencedTransaction(
    sql,
    ctx,
    async (tx) => {
      await tx`insert into effect_rows (key, task_id, fence) values (${String(input.key ?? ctx.effectKey)}, ${ctx.taskId}, ${ctx.fence})`;
    },
    typeof input.key === 'string' ? { key: input.key } : {},
  );
  await sql`insert into effect_seen (task_id, fence, what) values (${ctx.taskId}, ${ctx.fence}, ${r.outcome})`;
  return { effect: r.outcome };
});
