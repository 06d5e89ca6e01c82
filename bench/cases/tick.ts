import { benchSpec, explainDue, makeDue, runCreationSpan, seedBenchDags } from '@fenceline/db/bench-support';
import { shardOf } from '@fenceline/core';
import { type LeaderGroup, type LeaderToken, type NewJob, type ScheduledRunsItem } from '@fenceline/core/store';
import { benchCluster, fmt, percentile, pidOf, round, rssMb, schedulerMetrics, sleep, until, withDatabase, type BenchContext, type CaseResult } from '../lib';

const SHARDS = 16;
/** The scheduler's default page of due DAGs (FENCELINE_DUE_BATCH). */
const DUE_BATCH = 1000;
const DAY_MS = 86_400_000;

/** How far ahead of now the on-time reps put the shared slot: past one look-ahead read. */
const SLOT_AHEAD_MS = 3_500;

/** Sizes of the creation statement timed on its own: below, at and at the node's 500 cap. */
const STATEMENT_SIZES = [100, 250, 500];

/** The one job of every bench DAG, as a leader asks the creation statement to insert it. */
const ONE_JOB: NewJob = { taskId: 'only', state: 'ready', maxAttempts: 3, priority: 0, retryBackoffMs: 1_000, retryBackoffMaxMs: 60_000, timeoutMs: 3_600_000 };

/**
 * Case 4: 100,000 DAGs with daily schedules spread over the day, and 1,000 of them due at
 * once. Measures (a) the tick's due query, the part that must stay an index range scan,
 * run directly against the store under the real scheduler's leadership tokens; (b) the
 * whole tick in the real scheduler, twice over: on time (1,000 DAGs whose shared slot
 * comes while the scheduler runs: the tick reads them ahead and creates their runs at the
 * slot; timed in store time from the slot to the last run created and started), and
 * catching up (1,000 DAGs made due in the past, as a new leader finds the slots its
 * predecessor missed: timed by the scheduler from its due query to the last run created
 * and started); and (c) the scheduler's resident memory with every DAG loaded.
 */
export async function tickAtScale(ctx: BenchContext): Promise<CaseResult> {
  const total = ctx.quick ? 2_000 : 100_000;
  const due = ctx.quick ? 100 : Number(process.env.BENCH_TICK_DUE ?? 1_000);
  const reps = ctx.quick ? 1 : Number(process.env.BENCH_TICK_REPS ?? 5);
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
        return {
          id,
          nextRunAt: new Date(nextSlot(i, storeNowMs + 3_600_000)),
          spec: benchSpec(id, { schedule: { kind: 'interval', everyMs: DAY_MS, anchor: new Date(a).toISOString() }, tasks: [{ id: 'only', type: 'bench' }] }),
        };
      }),
      SHARDS,
    );
    ctx.log(`  seeded ${total} DAGs in ${((performance.now() - seedT0) / 1000).toFixed(1)} s`);
    // BENCH_TICK_LOOKAHEAD_MS=0 turns the look-ahead off, for an A/B of the on-time reps.
    const lookahead = process.env.BENCH_TICK_LOOKAHEAD_MS;
    const env: Record<string, string> = { FENCELINE_SHARDS: String(SHARDS), ...(lookahead ? { FENCELINE_TICK_LOOKAHEAD_MS: lookahead } : {}) };
    const cluster = benchCluster(url, { schedulers: 1, workers: 0, env });
    try {
      await cluster.start();
      const pid = pidOf(cluster, 'scheduler-1');
      await sleep(ctx.quick ? 300 : 1_500);
      const rssIdle = rssMb(pid);

      const catchUpReps = ctx.quick ? 1 : 2;
      const sets = reps + catchUpReps;
      // A fresh set of DAGs for each rep, so every tick creates new runs.
      const setOf = (rep: number) => {
        const idx = Array.from({ length: due }, (_, k) => (rep * due + k) * Math.floor(total / (due * sets)));
        return { idx, ids: idx.map((i) => `daily-${String(i).padStart(6, '0')}`) };
      };

      // On time: the slot lies ahead, so the scheduler reads the DAGs before it comes.
      const onTime: { statementLateMs: number; createLateMs: number | null; startLateMs: number | null; runs: number }[] = [];
      const onTimeKeys = ['tick_on_time_runs_total', 'tick_on_time_last_runs', 'tick_on_time_last_create_late_ms', 'tick_on_time_last_start_late_ms'];
      for (let rep = 0; rep < reps; rep++) {
        const { ids } = setOf(rep);
        const before = await schedulerMetrics(cluster, onTimeKeys);
        const slot = new Date((await store.now()).getTime() + SLOT_AHEAD_MS);
        await makeDue(
          store.db,
          ids,
          ids.map(() => slot),
        );
        const span = await until(
          'the runs of the slot to be created and started',
          async () => {
            const s = await runCreationSpan(store.db, ids, new Date(slot.getTime() - 60_000));
            return s.count >= due && s.started >= due ? s : null;
          },
          120_000,
          50,
        );
        // Without the look-ahead the runs are the catch-up path's, and the node reports no on-time slot.
        const after = await until(
          'the node to report the slot',
          async () => {
            const m = await schedulerMetrics(cluster, onTimeKeys);
            return (m.tick_on_time_runs_total ?? 0) - (before.tick_on_time_runs_total ?? 0) >= due ? m : null;
          },
          lookahead === '0' ? 1 : 60_000,
          50,
        ).catch(() => null);
        const tick = {
          // runs.created_at is the creation statement's start (store time).
          statementLateMs: span.last!.getTime() - slot.getTime(),
          // The node's own timing: its creations answered (committed), and its starts answered.
          createLateMs: after?.tick_on_time_last_create_late_ms ?? null,
          startLateMs: after?.tick_on_time_last_start_late_ms ?? null,
          runs: span.count,
        };
        onTime.push(tick);
        ctx.log(
          `  on time ${rep + 1}: ${fmt(tick.runs)} runs of one slot; creation began ${fmt(tick.statementLateMs)} ms after it, the runs were created (committed) ${fmt(tick.createLateMs)} ms and started ${fmt(tick.startLateMs)} ms after it`,
        );
      }

      const fullTicks: { detectMs: number; createMs: number; startMs: number; runs: number }[] = [];
      const queryMs: number[] = [];
      const tickKeys = ['tick_runs_created_total', 'tick_last_runs', 'tick_last_create_ms', 'tick_last_start_ms'];
      for (let rep = 0; rep < catchUpReps; rep++) {
        const { idx, ids } = setOf(reps + rep);
        const nowMs = (await store.now()).getTime();
        const before = await schedulerMetrics(cluster, tickKeys);
        // Each DAG's most recent slot; catch-up 'latest' runs exactly that slot.
        const t0 = await makeDue(
          store.db,
          ids,
          idx.map((i) => new Date(prevSlot(i, nowMs))),
        );
        const span = await until(
          'the tick to create every run',
          async () => {
            const s = await runCreationSpan(store.db, ids, new Date(t0.getTime() - 1));
            return s.count >= due ? s : null;
          },
          120_000,
          50,
        );
        // The node publishes a tick's times once its last run has started.
        const after = await until(
          'the tick to report its times',
          async () => {
            const m = await schedulerMetrics(cluster, tickKeys);
            return m.tick_runs_created_total! - before.tick_runs_created_total! >= due ? m : null;
          },
          60_000,
          50,
        );
        const tick = { detectMs: span.first!.getTime() - t0.getTime(), createMs: after.tick_last_create_ms!, startMs: after.tick_last_start_ms!, runs: after.tick_last_runs! };
        fullTicks.push(tick);
        ctx.log(
          `  catching up ${rep + 1}: found ${fmt(tick.detectMs)} ms after due; the tick created ${fmt(tick.runs)} runs in ${fmt(tick.createMs)} ms and started them by ${fmt(tick.startMs)} ms`,
        );
      }
      // The due query alone: make one fresh set due and read it repeatedly (reads do not move it).
      const idx = Array.from({ length: due }, (_, k) => k * Math.floor(total / due) + 1);
      const ids = idx.map((i) => `daily-${String(i).padStart(6, '0')}`);
      const rssAfter = rssMb(pid);
      // Stop the scheduler first so it does not consume them while we measure the read.
      await cluster.stop(5_000);
      const nowMs = (await store.now()).getTime();
      await makeDue(
        store.db,
        ids,
        idx.map((i) => new Date(prevSlot(i, nowMs))),
      );
      // Read under leadership tokens of our own: the node id of the stopped scheduler takes
      // its shards whether it released them or its lease is still live.
      const mine: LeaderToken[] = [];
      for (let s = 0; s < SHARDS; s++) {
        const got = await store.acquireShard({ shard: s, nodeId: 'scheduler-1', ttlMs: 60_000 });
        if (got) mine.push(got.token);
      }
      for (let i = 0; i < (ctx.quick ? 20 : 200); i++) {
        const t = performance.now();
        const r = await store.dueDags(mine, DUE_BATCH);
        queryMs.push(performance.now() - t);
        if (i === 0 && r.dags.length === 0) throw new Error(`the due query found nothing (${mine.length} shards led)`);
      }
      const plan = await explainDue(store.db, mine, DUE_BATCH);

      // The creation statement alone, one statement per size, under our own tokens: a plan
      // that turns bad at some size (it did at 100 to 250 runs) shows here, whatever the
      // size of the tick above. Each size takes DAGs of its own (offsets apart modulo the
      // steps, all multiples of 200) and a slot a day before any the ticks above used.
      const statementMs: Record<string, number> = {};
      const byShard = new Map(mine.map((t) => [t.shard, t]));
      const statementNowMs = (await store.now()).getTime();
      for (const [k, size] of STATEMENT_SIZES.entries()) {
        const n = ctx.quick ? size / 10 : size;
        const step = Math.floor(total / n);
        const picked = Array.from({ length: n }, (_, j) => j * step + 2 + k);
        const slots = picked.map((i) => new Date(prevSlot(i, statementNowMs) - DAY_MS));
        const dagIds = picked.map((i) => `daily-${String(i).padStart(6, '0')}`);
        await makeDue(store.db, dagIds, slots);
        const groups = new Map<number, ScheduledRunsItem[]>();
        dagIds.forEach((dagId, j) => {
          const shard = shardOf(dagId, SHARDS);
          const item: ScheduledRunsItem = {
            dagId,
            expectedNextRunAt: slots[j]!,
            slots: [slots[j]!],
            nextRunAt: new Date(slots[j]!.getTime() + DAY_MS),
            start: { version: 1, jobs: [ONE_JOB] },
          };
          const list = groups.get(shard);
          if (list) list.push(item);
          else groups.set(shard, [item]);
        });
        const across: LeaderGroup<ScheduledRunsItem>[] = [...groups].flatMap(([shard, items]) => {
          const token = byShard.get(shard);
          return token ? [{ token, items }] : [];
        });
        const t = performance.now();
        const out = await store.createScheduledRunsAcross(across);
        statementMs[String(n)] = round(performance.now() - t, 1)!;
        const created = out.reduce((sum, g) => sum + (Array.isArray(g) ? g.flat().length : 0), 0);
        if (created !== n) throw new Error(`the creation statement of ${n} runs created ${created}`);
      }
      ctx.log(
        `  the creation statement alone: ${Object.entries(statementMs)
          .map(([n, ms]) => `${n} runs ${fmt(ms, 1)} ms`)
          .join(', ')}`,
      );

      const create = fullTicks.map((t) => t.createMs);
      const start = fullTicks.map((t) => t.startMs);
      const lateStatement = onTime.map((t) => t.statementLateMs);
      const late = onTime.flatMap((t) => (t.createLateMs === null ? [] : [t.createLateMs]));
      const lateStart = onTime.flatMap((t) => (t.startLateMs === null ? [] : [t.startLateMs]));
      return {
        name: 'tick at scale',
        line:
          `${fmt(total)} DAGs, ${fmt(due)} due at once: due query (${fmt(DUE_BATCH)} rows) p50 ${fmt(percentile(queryMs, 50), 1)} / p99 ${fmt(percentile(queryMs, 99), 1)} ms; ` +
          `on time, ${fmt(due)} runs of one slot: creation began median ${fmt(percentile(lateStatement, 50))} / max ${fmt(Math.max(...lateStatement))} ms after the slot, all created median ${fmt(percentile(late, 50))} / max ${fmt(Math.max(...late))} ms and started median ${fmt(percentile(lateStart, 50))} / max ${fmt(Math.max(...lateStart))} ms after it; ` +
          `catching up, the whole tick creating ${fmt(due)} runs median ${fmt(percentile(create, 50))} / max ${fmt(Math.max(...create))} ms, to the last run started median ${fmt(percentile(start, 50))} / max ${fmt(Math.max(...start))} ms; ` +
          `the creation statement alone ${Object.entries(statementMs)
            .map(([n, ms]) => `${n} runs ${fmt(ms, 1)} ms`)
            .join(', ')}; scheduler RSS ${fmt(rssAfter || rssIdle)} MB`,
        figures: {
          dags: total,
          due,
          reps,
          dueQueryMs: { p50: round(percentile(queryMs, 50), 2), p99: round(percentile(queryMs, 99), 2), max: round(Math.max(...queryMs), 2) },
          onTime,
          fullTicks,
          creationStatementMs: statementMs,
          schedulerRssMb: { idleWithAllDags: round(rssIdle, 0), afterTicks: round(rssAfter, 0) },
        },
        notes: [
          `The due query is read with limit ${DUE_BATCH} (FENCELINE_DUE_BATCH, the default); a full page makes the tick read the next one by key while this one's runs are created, and the p50/p99 is per read.`,
          `On time: ${fmt(due)} DAGs get one shared slot ${fmt(SLOT_AHEAD_MS)} ms ahead while the scheduler runs. Its tick reads DAGs due within the look-ahead (FENCELINE_TICK_LOOKAHEAD_MS, 2,000 ms by default), holds them, and creates their runs when the slot comes by its estimate of the store's clock; the store refuses a run before its slot. Over ${fmt(reps)} slots: when the creation began is runs.created_at minus the slot (store time; created_at is the creation statement's start); created and started are the node's own timing (fenceline_tick_on_time_last_create_late_ms and ..._start_late_ms): from the slot, by its estimate of the store clock, to its creation statements answered (the runs committed) and to its start statements answered (every run's jobs inserted, ready to lease).`,
          `Catching up: ${fmt(due)} DAGs are made due in the past, as a new leader finds the slots its predecessor missed; "found" is the first run's creation after that (up to one tick interval, 1 s). The whole tick creates the runs of every due DAG at once: the node writes the runs of the due DAGs of all the shards it leads in statements of 500, side by side (each shard under its own lead check), then starts them (inserts their jobs) in batched statements. The scheduler times it itself (fenceline_tick_last_create_ms and fenceline_tick_last_start_ms in /metrics): from sending the due query to the last run created, and to the last run started, ${fmt(catchUpReps)} ticks.`,
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
