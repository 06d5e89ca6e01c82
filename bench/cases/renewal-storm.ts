import { backends, benchSpec, seedBenchDags, transactionCount, triggerBenchRuns } from '@fenceline/db/bench-support';
import { benchCluster, cpuSeconds, fmt, percentile, pidOf, round, sleep, withDatabase, WORKER_TOKEN, type BenchContext, type CaseResult } from '../lib';
import { LoadGenerators } from '../loadgen-client';

const SHARDS = 16;

/**
 * Case 3: many worker identities (multiplexed in a few load generator processes) each
 * hold one lease from a real scheduler, renew it once spread over a renewal interval, and
 * then all at once, as after a pause or a network blip. Each process renews its
 * identities' leases together (renewMany), as a host running many workers would. Reports renewals/s, latency, and
 * the CPU the store and the scheduler spent on the burst.
 */
export async function renewalStorm(ctx: BenchContext): Promise<CaseResult> {
  const identities = ctx.quick ? 300 : 10_000;
  const spreadMs = ctx.quick ? 1_000 : 30_000;
  const generators = ctx.quick ? 1 : 4;
  return withDatabase(async ({ url, store }) => {
    await store.initCluster(SHARDS);
    // One DAG with a job per identity; the cap is lifted so one DAG can fill the pool.
    await seedBenchDags(
      store.db,
      [{ id: 'storm', nextRunAt: null, spec: benchSpec('storm', { tasks: Array.from({ length: identities }, (_, i) => ({ id: `t${i}`, type: 'bench' })) }) }],
      SHARDS,
    );
    const cluster = benchCluster(url, { schedulers: 1, workers: 0, env: { FENCELINE_SHARDS: String(SHARDS), FENCELINE_CAP_PERCENT: '100', FENCELINE_LEASE_TTL_MS: '300000' } });
    const gens = new LoadGenerators(generators);
    try {
      await cluster.start();
      const ids = Array.from({ length: identities }, (_, i) => `storm-${i}`);
      await gens.init(ids, cluster.schedulerUrls(), WORKER_TOKEN);
      await triggerBenchRuns(store.db, ['storm']);
      const leaseT0 = performance.now();
      const leased = await gens.all<{ leased: number; failed: number }>({ cmd: 'lease', node: 0, timeoutMs: ctx.quick ? 20_000 : 120_000 });
      const leaseSeconds = (performance.now() - leaseT0) / 1000;
      const held = leased.reduce((n, l) => n + l.leased, 0);
      ctx.log(`  ${held}/${identities} identities hold a lease after ${leaseSeconds.toFixed(1)} s`);
      await sleep(500);
      const spread = await measure(gens, store.db, pidOf(cluster, 'scheduler-1'), 'spread', spreadMs);
      ctx.log(`  spread: ${JSON.stringify(spread)}`);
      await sleep(ctx.quick ? 500 : 2_000);
      const burst = await measure(gens, store.db, pidOf(cluster, 'scheduler-1'), 'burst', 0);
      ctx.log(`  burst: ${JSON.stringify(burst)}`);
      return {
        name: 'renewal storm',
        line: `${fmt(held)} identities: burst absorbed in ${fmt(burst.wallMs)} ms (${fmt(burst.renewalsPerSec)} renewals/s, p99 ${fmt(burst.p99Ms)} ms, store CPU ${fmt(burst.storeCpuSeconds, 2)} s); spread over ${spreadMs / 1000} s p99 ${fmt(spread.p99Ms)} ms`,
        figures: { identities, held, generators, leaseSeconds: round(leaseSeconds, 1), spread, burst },
        notes: [
          `${fmt(held)} identities leased one job each through real long polls in ${leaseSeconds.toFixed(1)} s (${fmt(held / leaseSeconds)} grants/s: the "workers come back after a blip" burst on the grant side).`,
          `Burst: ${burst.ok} renewed, ${burst.refused} refused, ${burst.errors} transport errors; ${burst.requests} renewMany requests (each generator process sends the identities due in the same 10 ms in one request per node, at most 1,000 leases each) and ${burst.statements} store transactions for ${held} renewals (the scheduler also batches renewals from many requests into one statement per 20 ms window).`,
          `Store CPU is the CPU time of the PostgreSQL backends of this database, from /proc, over the burst; scheduler CPU ${burst.schedulerCpuSeconds} s.`,
        ],
      };
    } finally {
      await gens.stop();
      await cluster.stop(5_000);
    }
  }, 2);
}

async function measure(gens: LoadGenerators, db: Parameters<typeof backends>[0], schedulerPid: number, mode: 'burst' | 'spread', windowMs: number) {
  const pg = (await backends(db)).pids;
  const pgCpu0 = pg.reduce((s, p) => s + cpuSeconds(p), 0);
  const schedCpu0 = cpuSeconds(schedulerPid);
  const tx0 = await transactionCount(db);
  const results = await gens.all<{ latenciesMs: number[]; ok: number; refused: number; errors: number; firstSentMs: number; lastDoneMs: number; requests: number }>({
    cmd: 'renew',
    mode,
    windowMs,
  });
  const tx1 = await transactionCount(db);
  const latencies = results.flatMap((r) => r.latenciesMs);
  const wallMs = Math.max(...results.map((r) => r.lastDoneMs)) - Math.min(...results.map((r) => r.firstSentMs));
  const n = results.reduce((s, r) => s + r.ok + r.refused, 0);
  return {
    ok: results.reduce((s, r) => s + r.ok, 0),
    refused: results.reduce((s, r) => s + r.refused, 0),
    errors: results.reduce((s, r) => s + r.errors, 0),
    wallMs: round(wallMs, 0)!,
    renewalsPerSec: round(n / (wallMs / 1000), 0)!,
    p50Ms: round(percentile(latencies, 50), 1)!,
    p99Ms: round(percentile(latencies, 99), 1)!,
    maxMs: round(Math.max(...latencies), 1)!,
    statements: tx1 - tx0 - 1,
    requests: results.reduce((s, r) => s + r.requests, 0),
    storeCpuSeconds: round(pg.reduce((s, p) => s + cpuSeconds(p), 0) - pgCpu0, 2)!,
    schedulerCpuSeconds: round(cpuSeconds(schedulerPid) - schedCpu0, 2)!,
  };
}
