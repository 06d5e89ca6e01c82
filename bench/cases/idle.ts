import { backends, transactionCount, workerRowWrites } from '@fenceline/db/bench-support';
import { benchCluster, cpuSeconds, fmt, round, sleep, withDatabase, WORKER_TOKEN, type BenchContext, type CaseResult } from '../lib';
import { LoadGenerators } from '../loadgen-client';

/**
 * Case 6: what idle workers cost the store. Two scheduler nodes with default timings run
 * first with no worker, then with many idle worker identities each holding a long poll on
 * both nodes. Store transactions (pg_stat_database xact_commit + xact_rollback; every
 * autocommit statement is one) are counted over the same window in both, and the
 * difference is what the idle workers cost.
 */
export async function idleCost(ctx: BenchContext): Promise<CaseResult> {
  const identities = ctx.quick ? 300 : 1_000;
  const windowMs = ctx.quick ? 2_000 : 60_000;
  return withDatabase(async ({ url, store }) => {
    await store.initCluster(16);
    const cluster = benchCluster(url, { schedulers: 2, workers: 0, env: { FENCELINE_SHARDS: '16' } });
    const gens = new LoadGenerators(ctx.quick ? 1 : 2);
    try {
      await cluster.start();
      // Let start-up (shard loads, first ticks) settle before the baseline window.
      await sleep(ctx.quick ? 500 : 5_000);
      const baseline = await window(store.db, windowMs);
      ctx.log(`  no workers: ${JSON.stringify(baseline)}`);
      await gens.init(
        Array.from({ length: identities }, (_, i) => `idle-${i}`),
        cluster.schedulerUrls(),
        WORKER_TOKEN,
      );
      const registrations = (await gens.all<{ registered: number }>({ cmd: 'idle', waitMs: 25_000 })).reduce((n, r) => n + r.registered, 0);
      // Every identity registers with both nodes before the window, as apps/worker does.
      if (registrations < identities * 2) throw new Error(`only ${registrations} of ${identities * 2} worker registrations succeeded`);
      // Backends publish their statistics up to 10 s after the fact: waiting longer keeps
      // the registrations' counts out of the window.
      await sleep(ctx.quick ? 1_000 : 15_000);
      const pids = [...cluster.procs.values()].map((p) => p.child.pid ?? 0);
      const cpu0 = pids.reduce((s, p) => s + cpuSeconds(p), 0);
      const loaded = await window(store.db, windowMs);
      const schedCpu = pids.reduce((s, p) => s + cpuSeconds(p), 0) - cpu0;
      ctx.log(`  ${identities} idle workers: ${JSON.stringify(loaded)}`);
      const perThousand = ((loaded.perSec - baseline.perSec) * 1000) / identities;
      return {
        name: 'idle cost',
        line: `${fmt(identities)} idle workers on 2 nodes add ${fmt(perThousand, 2)} store queries/s (${fmt(loaded.perSec, 2)}/s with them, ${fmt(baseline.perSec, 2)}/s without) over ${windowMs / 1000} s, and ${fmt(loaded.workerRowWritesPerSec, 1)} worker row writes/s; scheduler CPU ${fmt((100 * schedCpu) / (windowMs / 1000), 1)}% of a core`,
        figures: { identities, windowMs, baseline, withWorkers: loaded, addedPerSecPer1000: round(perThousand, 3), schedulerCpuSeconds: round(schedCpu, 2) },
        notes: [
          "The baseline is the schedulers' own loops (tick and shard contention every second per node, shard renewals, reconciliation); idle workers add only the heartbeat (one statement for all workers every 15 s per node).",
          'Worker row writes: rows of the workers table inserted or updated per second with the workers connected (pg_stat_user_tables). Each node vouches for every worker polling it, but a row refreshed within the last heartbeat interval is not written again, so with 2 nodes each worker is written about once per 15 to 30 s rather than twice per 15 s.',
          ctx.quick
            ? `Quick runs measure ${windowMs / 1000} s windows 1 s after the registrations, so the registrations' statistics land in the window and the figures are a smoke test only.`
            : 'Full runs measure 60 s windows, so the heartbeat is included.',
        ],
      };
    } finally {
      await gens.stop();
      await cluster.stop(5_000);
    }
  }, 2);
}

async function window(
  db: Parameters<typeof transactionCount>[0],
  ms: number,
): Promise<{ transactions: number; perSec: number; workerRowWritesPerSec: number; activeBackendsAtEnd: number }> {
  const w0rows = await workerRowWrites(db);
  const t0 = await transactionCount(db);
  const w0 = performance.now();
  await sleep(ms);
  const t1 = await transactionCount(db);
  const seconds = (performance.now() - w0) / 1000;
  // Other backends publish their counts at least every 10 s, so a 60 s window is close.
  const w1rows = await workerRowWrites(db);
  // One of the transactions counted is our own first read.
  const n = t1 - t0 - 1;
  return { transactions: n, perSec: round(n / seconds, 2)!, workerRowWritesPerSec: round((w1rows - w0rows) / seconds, 2)!, activeBackendsAtEnd: (await backends(db)).active };
}
