import { ceilingComplete, ceilingLease, seedReadyJobs } from '@fenceline/db/bench-support';
import { fmt, round, withDatabase, type BenchContext, type CaseResult } from '../lib';

const CONNECTIONS = 10;

/**
 * Case 1: what PostgreSQL itself does for the scheduler's per-job work, with no scheduler:
 * one conditional lease and one fenced completion per job, over 10 connections, first
 * with 100 jobs per statement and then with one. Every other throughput is reported as a
 * ratio to the batched figure of the same run.
 */
export async function storeCeiling(ctx: BenchContext): Promise<CaseResult> {
  const batched = await measure(ctx, ctx.quick ? 3_000 : 100_000, 100);
  const single = await measure(ctx, ctx.quick ? 300 : 10_000, 1);
  return {
    name: 'store ceiling',
    line: `batched ${fmt(batched.jobsPerSec)} jobs/s (100 jobs/statement), single ${fmt(single.jobsPerSec)} jobs/s, over ${CONNECTIONS} connections`,
    jobsPerSec: batched.jobsPerSec,
    figures: { connections: CONNECTIONS, batched, single },
  };
}

async function measure(ctx: BenchContext, jobs: number, batch: number): Promise<{ jobs: number; batch: number; seconds: number; jobsPerSec: number; lost: number }> {
  return withDatabase(async ({ store }) => {
    const ids = await seedReadyJobs(store.db, { dagId: 'ceiling', shard: 0, count: jobs });
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += batch) chunks.push(ids.slice(i, i + batch));
    let next = 0;
    let done = 0;
    const started = performance.now();
    // Ten loops share the chunks, like ten scheduler connections each leasing and completing.
    await Promise.all(
      Array.from({ length: CONNECTIONS }, async (_, c) => {
        const worker = `ceiling-worker-${c}`;
        for (let i = next++; i < chunks.length; i = next++) {
          const leased = await ceilingLease(store.db, chunks[i]!, worker, 90_000);
          // Read the count before adding: `done += await ...` would add to a stale `done`.
          const landed = await ceilingComplete(store.db, leased, worker);
          done += landed;
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const jobsPerSec = done / seconds;
    ctx.log(`  ceiling batch=${batch}: ${done}/${jobs} jobs in ${seconds.toFixed(2)} s = ${fmt(jobsPerSec)} jobs/s`);
    return { jobs, batch, seconds: round(seconds, 3)!, jobsPerSec: round(jobsPerSec, 0)!, lost: jobs - done };
  }, CONNECTIONS + 1);
}
