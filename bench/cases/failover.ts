import { benchSpec, seedBenchDags, storeNow } from '@fenceline/db/bench-support';
import { parseDagId, shardOf } from '@fenceline/core';
import { waitForHttp } from '../../tools/start/cluster';
import { benchCluster, fmt, median, round, sleep, until, withDatabase, type BenchContext, type CaseResult } from '../lib';

const SHARDS = 16;

/**
 * Case 5: SIGKILL the scheduler that leads a DAG's shard, trigger a run of that DAG at once,
 * and time how long until the standby has taken the shard over and leased the run's job
 * (store time from the kill to the job's leased_at). The killed node is restarted as the
 * new standby and the next repetition kills the other one. Full runs use the default shard
 * lease (15 s TTL, renewed every 5 s); quick runs use a 3 s lease and say so.
 */
export async function failover(ctx: BenchContext): Promise<CaseResult> {
  const reps = ctx.quick ? 1 : 10;
  const env: Record<string, string> = { FENCELINE_SHARDS: String(SHARDS) };
  if (ctx.quick) Object.assign(env, { FENCELINE_SHARD_LEASE_TTL_MS: '3000', FENCELINE_SHARD_RENEW_INTERVAL_MS: '1000', FENCELINE_TICK_INTERVAL_MS: '500' });
  return withDatabase(async ({ url, store }) => {
    await store.initCluster(SHARDS);
    await seedBenchDags(store.db, [{ id: 'failover', nextRunAt: null, spec: benchSpec('failover', { tasks: [{ id: 'only', type: 'bench' }] }) }], SHARDS);
    const shard = shardOf('failover', SHARDS);
    const cluster = benchCluster(url, { schedulers: 2, workers: 1, workerSlots: 4, env });
    const times: number[] = [];
    try {
      await cluster.start();
      await until('a worker', async () => (await store.listWorkers(60_000)).length > 0, 60_000);
      for (let rep = 0; rep < reps; rep++) {
        const leader = await until(
          'a live leader',
          async () => {
            const row = (await store.listShards()).find((s) => s.shard === shard);
            return row?.holder && row.expiresAt && row.expiresAt.getTime() > Date.now() ? row.holder : null;
          },
          60_000,
        );
        const t0 = await storeNow(store.db);
        cluster.signal(leader, 'SIGKILL');
        const run = await store.triggerRun(parseDagId('failover'));
        const leasedAt = await until(
          'the new leader to lease the job',
          async () => {
            const job = (await store.listJobs(run.id))[0];
            return job?.leasedAt ?? null;
          },
          120_000,
          50,
        );
        const ms = leasedAt.getTime() - t0.getTime();
        times.push(ms);
        ctx.log(`  rep ${rep + 1}: killed ${leader}; job leased by the new leader ${fmt(ms)} ms later`);
        // Bring the killed node back as the standby for the next repetition.
        await cluster.procs.get(leader)!.exited;
        const i = Number(leader.split('-')[1]) - 1;
        cluster.startScheduler(i);
        await waitForHttp(`${cluster.schedulerUrl(i)}/health`, 60_000);
        await sleep(500);
      }
      const med = median(times);
      return {
        name: 'failover',
        line: `SIGKILL of the leader to first job leased by the new leader: median ${fmt(med / 1000, 1)} s, max ${fmt(Math.max(...times) / 1000, 1)} s over ${reps} repetition${reps > 1 ? 's' : ''}${ctx.quick ? ' (3 s shard lease, quick)' : ' (default 15 s shard lease)'}`,
        figures: { reps, shardLeaseTtlMs: ctx.quick ? 3000 : 15000, timesMs: times.map((t) => round(t, 0)), medianMs: round(med, 0), maxMs: round(Math.max(...times), 0) },
        notes: [
          'The bound is the shard lease TTL (the standby must wait for it to run out) plus up to one tick for the standby to notice, plus loading the shard and one dispatch round.',
        ],
      };
    } finally {
      await cluster.stop(5_000);
    }
  }, 2);
}
