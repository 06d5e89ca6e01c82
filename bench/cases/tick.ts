import { benchSpec, explainDue, makeDue, runCreationSpan, seedBenchDags } from '@fenceline/db/bench';
import type { LeaderToken } from '@fenceline/core';
import { benchCluster, fmt, percentile, pidOf, round, rssMb, sleep, until, withDatabase, type BenchContext, type CaseResult } from '../lib';

const SHARDS = 16;
/** The scheduler's default page of due DAGs (FENCELINE_DUE_BATCH). */
const DUE_BATCH = 1000;
const DAY_MS = 86_400_000;

/**
 * Case 4: 100,000 DAGs with daily schedules spread over the day, and 1,000 of them due at
 * once. Measures (a) the tick's due query, the part that must stay an index range scan,
 * run directly against the store under the real scheduler's leadership tokens; (b) the
 * whole tick in the real scheduler, from the moment 1,000 DAGs become due to the last of
 * their runs created; and (c) the scheduler's resident memory with every DAG loaded.
 */
export async function tickAtScale(ctx: BenchContext): Promise<CaseResult> {
  const total = ctx.quick ? 2_000 : 100_000;
  const due = ctx.quick ? 100 : 1_000;
  const reps = ctx.quick ? 1 : 5;
  return withDatabase(async ({ url, store }) => {
    await store.initCluster(SHARDS);
    const storeNowMs = (await store.now()).getTime();
    // Daily interval schedules anchored across the day: slot of DAG i at (i / total) of a day.
    const anchors = Array.from({ length: total }, (_, i) => Math.floor((i / total) * DAY_MS));
    const nextSlot = (i: number, afterMs: number): number => {
      const a = anchors[i]!;
      return a + Math.ceil((afterMs - a + 1) / DAY_MS) * DAY_MS;
    };
    const prevSlot = (i: number, atMs: number): number => nextSlot(i, atMs) - DAY_MS;
    const seedT0 = performance.now();
    await seedBenchDags(
      store.db,
      anchors.map((a, i) => {
        const id = `daily-${String(i).padStart(6, '0')}`;
        return { id, nextRunAt: new Date(nextSlot(i, storeNowMs + 3_600_000)), spec: benchSpec(id, { schedule: { kind: 'interval', everyMs: DAY_MS, anchor: new Date(a).toISOString() }, tasks: [{ id: 'only', type: 'bench' }] }) };
      }),
      SHARDS,
    );
    ctx.log(`  seeded ${total} DAGs in ${((performance.now() - seedT0) / 1000).toFixed(1)} s`);
    const cluster = benchCluster(url, { schedulers: 1, workers: 0, env: { FENCELINE_SHARDS: String(SHARDS) } });
    try {
      await cluster.start();
      const pid = pidOf(cluster, 'scheduler-1');
      await sleep(ctx.quick ? 300 : 1_500);
      const rssIdle = rssMb(pid);

      const fullTicks: { detectMs: number; createSpanMs: number; runs: number }[] = [];
      const queryMs: number[] = [];
      for (let rep = 0; rep < reps; rep++) {
        // A fresh set of DAGs each time, so every tick creates new runs.
        const idx = Array.from({ length: due }, (_, k) => (rep * due + k) * Math.floor(total / (due * reps)));
        const ids = idx.map((i) => `daily-${String(i).padStart(6, '0')}`);
        const nowMs = (await store.now()).getTime();
        // Each DAG's most recent slot; catch-up 'latest' runs exactly that slot.
        const t0 = await makeDue(store.db, ids, idx.map((i) => new Date(prevSlot(i, nowMs))));
        const span = await until('the tick to create every run', async () => {
          const s = await runCreationSpan(store.db, ids, new Date(t0.getTime() - 1));
          return s.count >= due ? s : null;
        }, 120_000, 50);
        fullTicks.push({ detectMs: span.first!.getTime() - t0.getTime(), createSpanMs: span.last!.getTime() - span.first!.getTime(), runs: span.count });
        ctx.log(`  rep ${rep + 1}: found ${fmt(span.first!.getTime() - t0.getTime())} ms after due, ${due} runs created over ${fmt(span.last!.getTime() - span.first!.getTime())} ms`);
      }
      // The due query alone: make one fresh set due and read it repeatedly (reads do not move it).
      const idx = Array.from({ length: due }, (_, k) => k * Math.floor(total / due) + 1);
      const ids = idx.map((i) => `daily-${String(i).padStart(6, '0')}`);
      const rssAfter = rssMb(pid);
      // Stop the scheduler first so it does not consume them while we measure the read.
      await cluster.stop(5_000);
      const nowMs = (await store.now()).getTime();
      await makeDue(store.db, ids, idx.map((i) => new Date(prevSlot(i, nowMs))));
      // Read under leadership tokens of our own: the node id of the stopped scheduler takes
      // its shards whether it released them or its lease is still live.
      const mine: LeaderToken[] = [];
      for (let s = 0; s < SHARDS; s++) {
        const got = await store.acquireShard(s, 'scheduler-1', 60_000);
        if (got) mine.push(got.token);
      }
      for (let i = 0; i < (ctx.quick ? 20 : 200); i++) {
        const t = performance.now();
        const r = await store.dueDags(mine, DUE_BATCH);
        queryMs.push(performance.now() - t);
        if (i === 0 && r.dags.length === 0) throw new Error(`the due query found nothing (${mine.length} shards led)`);
      }
      const plan = await explainDue(store.db, mine.map((t) => t.shard), DUE_BATCH);

      const create = fullTicks.map((t) => t.createSpanMs);
      return {
        name: 'tick at scale',
        line: `${fmt(total)} DAGs, ${fmt(due)} due: due query (${fmt(DUE_BATCH)} rows) p50 ${fmt(percentile(queryMs, 50), 1)} / p99 ${fmt(percentile(queryMs, 99), 1)} ms; whole tick creating ${fmt(due)} runs median ${fmt(percentile(create, 50))} / max ${fmt(Math.max(...create))} ms; scheduler RSS ${fmt(rssAfter || rssIdle)} MB`,
        figures: {
          dags: total,
          due,
          reps,
          dueQueryMs: { p50: round(percentile(queryMs, 50), 2), p99: round(percentile(queryMs, 99), 2), max: round(Math.max(...queryMs), 2) },
          fullTicks,
          schedulerRssMb: { idleWithAllDags: round(rssIdle, 0), afterTicks: round(rssAfter, 0) },
        },
        notes: [
          `The due query is read with limit ${DUE_BATCH} (FENCELINE_DUE_BATCH, the default), so 1,000 due DAGs take one read per tick; the p50/p99 is per read.`,
          'The whole tick creates the runs of every due DAG at once: each shard leader writes its due DAGs\' runs in one transaction, then starts them (inserts their jobs) in one statement. Its span is from the first run created to the last (store time).',
          `The scheduler holds no DAG in memory until it is due or has an active run, so its RSS does not grow with the number of DAGs (it was ${fmt(rssIdle)} MB right after start with ${fmt(total)} DAGs stored).`,
          'EXPLAIN ANALYZE of the due query follows.',
        ],
        details: plan,
      };
    } finally {
      await cluster.stop(5_000);
    }
  }, 2);
}
