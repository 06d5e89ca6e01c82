import { cpus } from 'node:os';
import { openStore, type SqlStore } from '@fenceline/db';
import {
  backends,
  benchSpec,
  commitProbe,
  dispatchLatency,
  dispatchLatencyBySecond,
  jobsRunTwice,
  maxRunId,
  runStates,
  seedBenchDags,
  triggerBenchRuns,
} from '@fenceline/db/bench-support';
import { LONG_PAUSE_MS } from '@fenceline/scheduler';
import type { Cluster } from '../../tools/start/cluster';
import { benchCluster, cpuSeconds, fmt, machineBusySeconds, percentile, round, schedulerMetrics, sleep, until, withDatabase, type BenchContext, type CaseResult } from '../lib';

const SHARDS = 16;
/**
 * How often the case asks the store whether a phase's runs have all ended. The phase's
 * duration comes from the store's own timestamps (the first run created, the last result
 * written), so this only bounds the wall time; each probe counts a phase's runs by state,
 * which at 100,000 jobs is 33,000 rows and several milliseconds of the store's CPU, so
 * polling ten times a second took store time from the scheduler being measured.
 */
const PHASE_POLL_MS = 500;

/**
 * How often the paced phases trigger runs (BENCH_E2E_PACED_EVERY_MS, default 50; a bad
 * value stops the case with the reason). Each trigger is one statement whose runs reach
 * the scheduler together, so the cadence sets the lump size: 50 ms at 3,000 jobs/s is 150
 * runs a lump. Smaller lumps batch worse and cost more CPU per job: at 10 ms the paced p99
 * went from 61-91 to 203-206 ms (docs/history.md, "Change: the paced phase runs its 15 s").
 */
function pacedEveryMs(raw: string | undefined): number {
  if (raw === undefined || raw === '') return 50;
  const ms = Number(raw);
  if (!Number.isInteger(ms) || ms < 1 || ms > 1000) throw new Error(`BENCH_E2E_PACED_EVERY_MS: "${raw}" is not a whole number of milliseconds from 1 to 1000`);
  return ms;
}

/** The paced phase's rate in quick runs (jobs/s), fixed so that the CPU guard compares like with like. */
const QUICK_PACED_RATE = 200;

/** How long each rate of the paced sweep (BENCH_E2E_PACED_SWEEP) triggers runs. */
const SWEEP_SECONDS = 6;

/** The rates (jobs/s) of BENCH_E2E_PACED_SWEEP, a comma-separated list; a bad entry stops the bench with the reason. */
function sweepRates(raw: string | undefined, everyMs: number): number[] {
  if (!raw) return [];
  return raw.split(',').map((part) => {
    const rate = Number(part.trim());
    if (!Number.isFinite(rate) || rate < 1000 / everyMs)
      throw new Error(`BENCH_E2E_PACED_SWEEP: "${part}" is not a rate of at least ${1000 / everyMs} jobs/s (one run per ${everyMs} ms)`);
    return rate;
  });
}

interface Phase {
  jobs: number;
  seconds: number;
  jobsPerSec: number;
  dispatchP50Ms: number | null;
  dispatchP99Ms: number | null;
  dispatchMaxMs: number | null;
  legsP50Ms: Record<string, number | null>;
  legsP99Ms: Record<string, number | null>;
  cpuSeconds: Record<string, number>;
  ranTwice: number;
  dispatch: DispatchFigures;
}

interface DispatchFigures {
  rounds: number;
  meanRoundMs: number | null;
  meanGrantMs: number | null;
  undelivered: number;
  /** Long polls and result calls the schedulers served: HTTP requests per job. */
  polls: number;
  completeCalls: number;
}

/** The schedulers' dispatch counters (from /metrics), summed over the nodes. */
function dispatchCounters(cluster: Cluster): Promise<Record<string, number>> {
  return schedulerMetrics(cluster, [
    'dispatch_rounds_total',
    'dispatch_round_ms_total',
    'dispatch_grant_ms_total',
    'leases_undelivered_total',
    'http_requests_total{procedure="poll"}',
    'http_requests_total{procedure="completeMany"}',
  ]);
}

function dispatchFigures(before: Record<string, number>, after: Record<string, number>): DispatchFigures {
  const d = (k: string): number => (after[k] ?? 0) - (before[k] ?? 0);
  const rounds = d('dispatch_rounds_total');
  return {
    rounds,
    meanRoundMs: rounds > 0 ? round(d('dispatch_round_ms_total') / rounds, 1) : null,
    meanGrantMs: rounds > 0 ? round(d('dispatch_grant_ms_total') / rounds, 1) : null,
    undelivered: d('leases_undelivered_total'),
    polls: d('http_requests_total{procedure="poll"}'),
    completeCalls: d('http_requests_total{procedure="completeMany"}'),
  };
}

/**
 * Case 2: no-op jobs through the whole product path (trigger, readiness, fair share,
 * fenced lease, long-poll delivery over HTTP, fenced result write, downstream readiness)
 * with 2 scheduler nodes and several worker processes with many slots. Three phases:
 * wide DAGs (a root and a fan-out), many small DAGs (a root and two children), and small
 * single-job runs triggered at a steady pace of half the measured rate, for latency.
 */
export async function endToEnd(ctx: BenchContext): Promise<CaseResult> {
  // Full runs default to the issue's 100,000 jobs per phase (about a minute for the case
  // on this machine); BENCH_E2E_JOBS=20000 gives a quicker, noisier figure.
  const perPhase = Number(process.env.BENCH_E2E_JOBS ?? 100_000);
  // Wide DAGs stay 5,000 jobs wide whatever the phase's size (a DAG holds at most
  // LIMITS.maxTasksPerDag tasks): 20,000 jobs are 4 of them, 100,000 are 20.
  // Quick runs (CI) are large enough that the CPU guard's per-job figure is the jobs' cost
  // and not the cluster's idle timers: 3,000 jobs a phase, a few seconds each.
  const wide = ctx.quick ? { dags: 1, width: 3_000 } : { dags: Math.max(1, Math.round(perPhase / 5_000)), width: 5_000 };
  const small = ctx.quick ? { dags: 1_000 } : { dags: Math.round(perPhase / 3) };
  const workers = ctx.quick ? 2 : 4;
  // 4 x 1,024 slots: the in-flight jobs a scheduler pair needs to keep its batches full
  // (docs/history.md, "Change: the end-to-end case at the issue's size"); still under half
  // of the mission's 10,000 workers.
  const slots = Number(process.env.BENCH_E2E_SLOTS ?? 1024);
  return withDatabase(async ({ url, store }) => {
    await store.initCluster(SHARDS);
    const wideIds = Array.from({ length: wide.dags }, (_, i) => `wide-${i}`);
    const smallIds = Array.from({ length: small.dags }, (_, i) => `small-${i}`);
    // BENCH_E2E_PACED_SWEEP=250,500,1000 adds one paced phase per rate after the usual one,
    // each with DAGs of its own, to draw dispatch latency against load in one run.
    const everyMs = pacedEveryMs(process.env.BENCH_E2E_PACED_EVERY_MS);
    const sweep = ctx.quick ? [] : sweepRates(process.env.BENCH_E2E_PACED_SWEEP, everyMs);
    const sweepDags = sweep.reduce((n, r) => n + Math.ceil(r * SWEEP_SECONDS) + 100, 0);
    // Enough DAGs for 15 s at 4,000 jobs/s: every paced run is of a DAG of its own.
    const pacedCount = ctx.quick ? 1_000 : 60_000;
    const pacedIds = Array.from({ length: pacedCount + sweepDags }, (_, i) => `paced-${i}`);
    await seedBenchDags(
      store.db,
      [
        ...wideIds.map((id) => ({
          id,
          nextRunAt: null,
          spec: benchSpec(id, {
            tasks: [{ id: 'root', type: 'bench' }, ...Array.from({ length: wide.width - 1 }, (_, k) => ({ id: `part-${k}`, type: 'bench', dependsOn: ['root'] }))],
          }),
        })),
        ...smallIds.map((id) => ({
          id,
          nextRunAt: null,
          spec: benchSpec(id, {
            tasks: [
              { id: 'a', type: 'bench' },
              { id: 'b', type: 'bench', dependsOn: ['a'] },
              { id: 'c', type: 'bench', dependsOn: ['a'] },
            ],
          }),
        })),
        ...pacedIds.map((id) => ({ id, nextRunAt: null, spec: benchSpec(id, { tasks: [{ id: 'only', type: 'bench' }] }) })),
      ],
      SHARDS,
    );
    const cluster = benchCluster(url, { schedulers: 2, workers, workerSlots: slots, env: { FENCELINE_SHARDS: String(SHARDS) } });
    // A connection of its own for the commit-latency probe of the paced phases.
    const probe = await openStore({ databaseUrl: url, applicationName: 'fenceline-bench-probe', max: 1 });
    try {
      await cluster.start();
      await until('workers to register', async () => (await store.listWorkers(60_000)).length >= workers, 60_000);
      // FENCELINE_SHARE_SHARDS=on (an A/B): the nodes share the shards out once workers poll them; measure with both leading.
      if (process.env.FENCELINE_SHARE_SHARDS === 'on')
        await until(
          'both nodes to lead half the shards',
          async () => {
            const now = Date.now();
            const led = (await store.listShards()).filter((s) => s.holder && s.expiresAt && s.expiresAt.getTime() > now).map((s) => s.holder);
            return led.length === SHARDS && led.filter((h) => h === 'scheduler-1').length === SHARDS / 2;
          },
          60_000,
        );
      await sleep(500);
      ctx.log(`  cluster up: 2 schedulers, ${workers} workers x ${slots} slots`);
      const widePhase = await phase(ctx, store, cluster, 'wide', wideIds, wide.dags * wide.width);
      const smallPhase = await phase(ctx, store, cluster, 'small', smallIds, small.dags * 3);
      // BENCH_E2E_PACED_RATE sets the paced phase's rate (jobs/s) instead, to draw latency against load.
      // Quick runs pace at a fixed rate: the guard's CPU per job of a paced phase includes
      // the cluster's idle timers over its seconds, so a rate that followed the machine's
      // speed would move the figure with the machine.
      const rate = Number(process.env.BENCH_E2E_PACED_RATE ?? 0) || (ctx.quick ? QUICK_PACED_RATE : Math.min(widePhase.jobsPerSec, smallPhase.jobsPerSec) / 2);
      const paced = await pacedPhase(ctx, store, probe, cluster, pacedIds.slice(0, pacedCount), rate, ctx.quick ? 4 : 15, everyMs);
      const swept: Awaited<ReturnType<typeof pacedPhase>>[] = [];
      let offset = pacedCount;
      for (const r of sweep) {
        const count = Math.ceil(r * SWEEP_SECONDS) + 100;
        swept.push(await pacedPhase(ctx, store, probe, cluster, pacedIds.slice(offset, offset + count), r, SWEEP_SECONDS, everyMs));
        offset += count;
      }
      const best = Math.max(widePhase.jobsPerSec, smallPhase.jobsPerSec);
      return {
        name: 'end to end',
        line:
          `wide ${fmt(widePhase.jobsPerSec)} jobs/s (${fmt(widePhase.jobs)} jobs, dispatch p50 ${fmt(widePhase.dispatchP50Ms, 1)} / p99 ${fmt(widePhase.dispatchP99Ms, 1)} ms), ` +
          `small ${fmt(smallPhase.jobsPerSec)} jobs/s (${fmt(smallPhase.jobs)} jobs, p50 ${fmt(smallPhase.dispatchP50Ms, 1)} / p99 ${fmt(smallPhase.dispatchP99Ms, 1)} ms), ` +
          `paced at ${fmt(paced.targetJobsPerSec)}/s: p50 ${fmt(paced.dispatchP50Ms, 1)} / p99 ${fmt(paced.dispatchP99Ms, 1)} ms`,
        jobsPerSec: best,
        figures: {
          schedulers: 2,
          workers,
          slotsPerWorker: slots,
          wide: { ...wide, ...widePhase },
          small: { ...small, ...smallPhase },
          paced,
          ...(swept.length > 0 ? { pacedSweep: swept } : {}),
        },
        notes: [
          `wide: ${wide.dags} DAGs of 1 root + ${wide.width - 1} children; small: ${small.dags} DAGs of a root and two children; paced: single-job runs triggered every ${everyMs} ms at half the slower of the two rates, for up to 15 s (each run of a DAG of its own, whose version the scheduler has not read before).`,
          `CPU seconds during the small phase: ${Object.entries(smallPhase.cpuSeconds)
            .map(([k, v]) => `${k} ${v}`)
            .join(', ')}.`,
          `Jobs leased more than once: wide ${widePhase.ranTwice}, small ${smallPhase.ranTwice}, paced ${paced.ranTwice} (every job has retries 0; any lease after the first would show here).`,
          `Paced phase: while runs were triggered the measured processes (schedulers, workers and this database's PostgreSQL backends) kept ${fmt(paced.busyCores, 2)} cores busy, the whole machine ${fmt(paced.machineBusyCores, 2)} of its ${cpus().length}; a one-row commit on a connection of its own every 5 ms took p50 ${fmt(paced.storeCommitMs.p50, 1)} / p99 ${fmt(paced.storeCommitMs.p99, 1)} / p99.9 ${fmt(paced.storeCommitMs.p999, 1)} / max ${fmt(paced.storeCommitMs.max, 1)} ms meanwhile; the schedulers' event loops stalled ${LONG_PAUSE_MS} ms or more ${paced.schedulerPauses.runtime_eventloop_stalls_total} times and their GC paused that long ${paced.schedulerPauses.runtime_gc_long_pauses_total} times.`,
          ...swept.map(
            (p) =>
              `Paced sweep at ${fmt(p.targetJobsPerSec)} jobs/s: dispatch p50 ${fmt(p.dispatchP50Ms, 1)} / p99 ${fmt(p.dispatchP99Ms, 1)} / max ${fmt(p.dispatchMaxMs, 1)} ms, ${fmt(p.busyCores, 2)} cores busy in the measured processes, ${fmt(p.machineBusyCores, 2)} in the whole machine (${fmt(p.jobs)} jobs).`,
          ),
        ],
      };
    } finally {
      await cluster.stop(5_000);
      await probe.close().catch(() => undefined);
    }
  }, 4);
}

const PAUSE_COUNTERS = [
  'runtime_eventloop_stalls_total',
  'runtime_eventloop_stall_ms_total',
  'runtime_gc_long_pauses_total',
  'runtime_gc_pause_ms_total',
  'runtime_gc_pauses_total',
] as const;

/** The schedulers' own pause counters, summed over the nodes. */
function schedulerPauses(cluster: Cluster): Promise<Record<string, number>> {
  return schedulerMetrics(cluster, [...PAUSE_COUNTERS]);
}

function diff(before: Record<string, number>, after: Record<string, number>): Record<(typeof PAUSE_COUNTERS)[number], number> {
  return Object.fromEntries(PAUSE_COUNTERS.map((k) => [k, Math.round(((after[k] ?? 0) - (before[k] ?? 0)) * 10) / 10])) as Record<(typeof PAUSE_COUNTERS)[number], number>;
}

function cpuSnapshot(cluster: Cluster, pgPids: number[]): Record<string, number> {
  const out: Record<string, number> = { schedulers: 0, workers: 0, postgres: 0 };
  for (const p of cluster.procs.values()) {
    const key = p.kind === 'scheduler' ? 'schedulers' : 'workers';
    out[key]! += cpuSeconds(p.child.pid ?? 0);
  }
  for (const pid of pgPids) out.postgres! += cpuSeconds(pid);
  return out;
}

async function phase(ctx: BenchContext, store: SqlStore, cluster: Cluster, name: string, dagIds: string[], expectedJobs: number): Promise<Phase> {
  const after = await maxRunId(store.db);
  const pg = (await backends(store.db)).pids;
  const cpu0 = cpuSnapshot(cluster, pg);
  const counters0 = await dispatchCounters(cluster);
  const wall0 = performance.now();
  const t0 = await triggerBenchRuns(store.db, dagIds);
  await until(
    `${name} runs to finish`,
    async () => {
      const s = await runStates(store.db, after);
      const ended = (s.succeeded ?? 0) + (s.failed ?? 0);
      return ended >= dagIds.length ? s : null;
    },
    ctx.quick ? 300_000 : 900_000,
    PHASE_POLL_MS,
  );
  const wallSeconds = (performance.now() - wall0) / 1000;
  const cpu1 = cpuSnapshot(cluster, pg);
  const dispatch = dispatchFigures(counters0, await dispatchCounters(cluster));
  const lat = await dispatchLatency(store.db, after);
  const seconds = lat.lastWrittenAt ? (lat.lastWrittenAt.getTime() - t0.getTime()) / 1000 : wallSeconds;
  const jobsPerSec = lat.jobs / seconds;
  const cpuSecondsUsed = Object.fromEntries(Object.keys(cpu1).map((k) => [k, round(cpu1[k]! - cpu0[k]!, 3)!]));
  ctx.log(
    `  ${name}: ${lat.jobs}/${expectedJobs} jobs in ${seconds.toFixed(2)} s = ${fmt(jobsPerSec)} jobs/s; dispatch p50 ${fmt(lat.p50Ms, 1)} p99 ${fmt(lat.p99Ms, 1)} ms; legs p50 ${JSON.stringify(lat.legsP50Ms)}; cpu ${JSON.stringify(cpuSecondsUsed)}; dispatch ${JSON.stringify(dispatch)}`,
  );
  return {
    jobs: lat.jobs,
    seconds: round(seconds, 3)!,
    jobsPerSec: round(jobsPerSec, 0)!,
    dispatchP50Ms: round(lat.p50Ms, 1),
    dispatchP99Ms: round(lat.p99Ms, 1),
    dispatchMaxMs: round(lat.maxMs, 1),
    legsP50Ms: Object.fromEntries(Object.entries(lat.legsP50Ms).map(([k, v]) => [k, round(v, 1)])),
    legsP99Ms: Object.fromEntries(Object.entries(lat.legsP99Ms).map(([k, v]) => [k, round(v, 1)])),
    cpuSeconds: cpuSecondsUsed,
    ranTwice: await jobsRunTwice(store.db, after),
    dispatch,
  };
}

/** Single-job runs triggered every `everyMs` at `rate` jobs/s for `seconds` (fewer if `dagIds` run out first), then their dispatch latency. */
async function pacedPhase(ctx: BenchContext, store: SqlStore, probe: SqlStore, cluster: Cluster, dagIds: string[], rate: number, seconds: number, everyMs: number) {
  const after = await maxRunId(store.db);
  const pg = (await backends(store.db)).pids;
  const cpu0 = cpuSnapshot(cluster, pg);
  const counters0 = await dispatchCounters(cluster);
  const machine0 = machineBusySeconds();
  const perTick = Math.max(1, Math.round((rate * everyMs) / 1000));
  const ticks = Math.min(Math.floor((seconds * 1000) / everyMs), Math.floor(dagIds.length / perTick));
  const commits = await commitProbe(probe.db);
  const pauses0 = await schedulerPauses(cluster);
  const start = performance.now();
  let used = 0;
  for (let t = 0; t < ticks; t++) {
    await triggerBenchRuns(store.db, dagIds.slice(used, used + perTick));
    used += perTick;
    const wait = start + (t + 1) * everyMs - performance.now();
    if (wait > 0) await sleep(wait);
  }
  // CPU while runs were being triggered: the load the latency was measured under.
  const triggerSeconds = (performance.now() - start) / 1000;
  const cpuPacing = cpuSnapshot(cluster, pg);
  const busyCores = Object.keys(cpuPacing).reduce((sum, k) => sum + cpuPacing[k]! - cpu0[k]!, 0) / triggerSeconds;
  const machineBusyCores = (machineBusySeconds() - machine0) / triggerSeconds;
  const commitTimes = await commits.stop();
  const commit = { p50: percentile(commitTimes, 50), p99: percentile(commitTimes, 99), p999: percentile(commitTimes, 99.9), max: Math.max(...commitTimes) };
  const pauses = diff(pauses0, await schedulerPauses(cluster));
  await until(
    'paced runs to finish',
    async () => {
      const s = await runStates(store.db, after);
      return (s.succeeded ?? 0) + (s.failed ?? 0) >= used;
    },
    120_000,
    PHASE_POLL_MS,
  );
  const cpu1 = cpuSnapshot(cluster, pg);
  const cpuSecondsUsed = Object.fromEntries(Object.keys(cpu1).map((k) => [k, round(cpu1[k]! - cpu0[k]!, 3)!]));
  const dispatch = dispatchFigures(counters0, await dispatchCounters(cluster));
  const lat = await dispatchLatency(store.db, after);
  const bySecond = await dispatchLatencyBySecond(store.db, after);
  ctx.log(
    `  paced: ${used} runs at ${fmt(rate)}/s target (${perTick} every ${everyMs} ms); cores busy: ${fmt(busyCores, 2)} measured processes, ${fmt(machineBusyCores, 2)} whole machine; dispatch p50 ${fmt(lat.p50Ms, 1)} p99 ${fmt(lat.p99Ms, 1)} max ${fmt(lat.maxMs, 1)} ms; legs p50 ${JSON.stringify(lat.legsP50Ms)} p99 ${JSON.stringify(lat.legsP99Ms)}; cpu ${JSON.stringify(cpuSecondsUsed)}; dispatch ${JSON.stringify(dispatch)}`,
  );
  ctx.log(
    `    store commits meanwhile (one row, every 5 ms, own connection): p50 ${fmt(commit.p50, 1)} p99 ${fmt(commit.p99, 1)} p99.9 ${fmt(commit.p999, 1)} max ${fmt(commit.max, 1)} ms`,
  );
  ctx.log(
    `    schedulers meanwhile: ${pauses.runtime_eventloop_stalls_total} event-loop stalls of ${LONG_PAUSE_MS}+ ms (${pauses.runtime_eventloop_stall_ms_total} ms in all), ${pauses.runtime_gc_long_pauses_total} GC pauses of ${LONG_PAUSE_MS}+ ms, GC ${fmt(pauses.runtime_gc_pause_ms_total, 0)} ms in ${pauses.runtime_gc_pauses_total} pauses`,
  );
  ctx.log(`    p99 by second: ${bySecond.map((b) => `${b.second}s ${fmt(b.p99Ms, 0)}`).join(', ')} ms`);
  return {
    targetJobsPerSec: round((perTick * 1000) / everyMs, 0),
    everyMs,
    jobs: lat.jobs,
    triggeredForSeconds: round(triggerSeconds, 1),
    dispatchP50Ms: round(lat.p50Ms, 1),
    dispatchP99Ms: round(lat.p99Ms, 1),
    dispatchMaxMs: round(lat.maxMs, 1),
    legsP50Ms: Object.fromEntries(Object.entries(lat.legsP50Ms).map(([k, v]) => [k, round(v, 1)])),
    legsP99Ms: Object.fromEntries(Object.entries(lat.legsP99Ms).map(([k, v]) => [k, round(v, 1)])),
    cpuSeconds: cpuSecondsUsed,
    busyCores: round(busyCores, 2),
    machineBusyCores: round(machineBusyCores, 2),
    p99BySecondMs: bySecond.map((b) => round(b.p99Ms, 1)),
    schedulerPauses: pauses,
    storeCommitMs: { commits: commitTimes.length, p50: round(commit.p50, 2), p99: round(commit.p99, 1), p999: round(commit.p999, 1), max: round(commit.max, 1) },
    ranTwice: await jobsRunTwice(store.db, after),
    dispatch,
  };
}
