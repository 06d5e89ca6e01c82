import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { REPO_ROOT, type Cluster } from '../../tools/start/cluster';
import { benchCluster, cpuSeconds, fmt, round, rssMb, sleep, until, withDatabase, WORKER_TOKEN, type BenchContext, type CaseResult } from '../lib';
import { LoadGenerators } from '../loadgen-client';

/** The worker's default poll wait (FENCELINE_POLL_WAIT_MS), so idle re-polls come as often as in production. */
const POLL_WAIT_MS = 25_000;
/** Sockets one load generator holds at most (its descriptor limit is 20,000 here). */
const SOCKETS_PER_GENERATOR = 10_000;
/** The descriptor limit of the node started to see what it does past it. */
const LOW_FD_LIMIT = 2_048;
/** How long the fleet may take to poll every node, at start and after a restart (BENCH_FLEET_RAMP_S). */
const RAMP_TIMEOUT_MS = Number(process.env.BENCH_FLEET_RAMP_S ?? 300) * 1000;

interface NodeSample {
  rssMb: number;
  heapMb: number;
  waiting: number;
  open: number;
  refused: number;
}

/**
 * Case `fleet`: every worker long-polls every scheduler node, so 10,000 workers and 5
 * nodes hold 50,000 open requests. 10,000 worker identities (BENCH_FLEET_WORKERS) poll as
 * apps/worker does, each on connections of its own, from a few load generator processes,
 * against 2 and then 5 real scheduler nodes (BENCH_FLEET_NODES). For each: the nodes'
 * memory and CPU idle and with every identity polling, over the same window; the time for
 * every identity to poll a node again after it is killed and restarted; then one node is
 * restarted with a low descriptor limit (ulimit -n 2048) to show what it does past it.
 * Not in --quick: it takes minutes and the machine's descriptors.
 */
export async function fleetConnections(ctx: BenchContext): Promise<CaseResult> {
  const identities = Number(process.env.BENCH_FLEET_WORKERS ?? (ctx.quick ? 500 : 10_000));
  const nodeCounts = (process.env.BENCH_FLEET_NODES ?? '2,5').split(',').map(Number);
  const windowMs = Number(process.env.BENCH_FLEET_WINDOW_MS ?? (ctx.quick ? 5_000 : 30_000));
  const phases: Record<string, unknown>[] = [];
  const lines: string[] = [];
  for (const nodes of nodeCounts) {
    const p = await phase(ctx, nodes, identities, windowMs, nodes === nodeCounts[0] && identities > LOW_FD_LIMIT);
    phases.push(p.figures);
    lines.push(p.line);
  }
  return {
    name: 'fleet connections',
    line: lines.join('; '),
    figures: { identities, windowMs, pollWaitMs: POLL_WAIT_MS, phases },
    notes: [
      'CPU per connection is the node process CPU seconds over the window (from /proc) divided by the connections it holds; the idle node over the same window is given beside it. Each identity re-polls every 25 s, so 10,000 identities are 400 polls answered empty and re-sent per second per node.',
      'Heap is V8 heap used, RSS the resident set, both after the window; per connection is the difference from the idle node divided by the connections.',
      'Back after a restart: SIGKILL of a node, restarted at once on its port, timed from the restart to every identity holding a poll on it (the node counts its waiting workers; "every" is at least 99.9% of them, since each re-poll leaves a gap of a few ms).',
      `At the descriptor limit: one node restarted under ulimit -n ${LOW_FD_LIMIT} holds ${LOW_FD_LIMIT} less its reserve and refuses the rest with 503 and Retry-After; the refused identities keep retrying with the worker backoff (up to 2 s).`,
    ],
  };
}

async function phase(ctx: BenchContext, nodes: number, identities: number, windowMs: number, withFdLimit: boolean): Promise<{ line: string; figures: Record<string, unknown> }> {
  return withDatabase(async ({ url, store }) => {
    await store.initCluster(16);
    const cluster = benchCluster(url, { schedulers: nodes, workers: 0, startTimeoutMs: 180_000, env: { FENCELINE_SHARDS: '16', FENCELINE_POLL_WAIT_MS: String(POLL_WAIT_MS) } });
    const gens = new LoadGenerators(Math.max(2, Math.ceil((identities * nodes) / SOCKETS_PER_GENERATOR)));
    let lowFd: ChildProcess | null = null;
    try {
      await cluster.start();
      await sleep(ctx.quick ? 1_000 : 5_000);
      const idle = await measure(cluster, nodes, windowMs);
      ctx.log(`  ${nodes} nodes idle: ${JSON.stringify(idle)}`);

      await gens.init(
        Array.from({ length: identities }, (_, i) => `fleet-${i}`),
        cluster.schedulerUrls(),
        WORKER_TOKEN,
      );
      const t0 = performance.now();
      await gens.all({ cmd: 'fleet', waitMs: POLL_WAIT_MS });
      const threshold = Math.floor(identities * 0.999);
      const ramp = await Promise.all(Array.from({ length: nodes }, (_, i) => untilPolling(cluster, i, threshold, RAMP_TIMEOUT_MS, ctx.log)));
      const rampS = (performance.now() - t0) / 1000;
      const rampDone = ramp.every((r) => r.complete);
      ctx.log(`  ${rampDone ? 'every' : 'NOT every'} identity polling ${nodes} nodes after ${rampS.toFixed(1)} s: ${ramp.map((r) => r.waiting).join(', ')}`);
      await sleep(ctx.quick ? 1_000 : 5_000);
      const gen0 = gens.pids.reduce((s, p) => s + cpuSeconds(p), 0);
      const loaded = await measure(cluster, nodes, windowMs);
      const genCpu = gens.pids.reduce((s, p) => s + cpuSeconds(p), 0) - gen0;
      const genRss = gens.pids.reduce((s, p) => s + rssMb(p), 0);
      ctx.log(`  ${nodes} nodes with ${identities} identities: ${JSON.stringify(loaded)}`);

      // Kill the last node and restart it at once; time until every identity polls it again.
      const last = nodes - 1;
      const victim = cluster.procs.get(`scheduler-${nodes}`)!;
      victim.child.kill('SIGKILL');
      await victim.exited;
      const k0 = performance.now();
      cluster.startScheduler(last);
      await until('the restarted node to answer', () => health(cluster.schedulerUrl(last)), 120_000, 100);
      const upS = (performance.now() - k0) / 1000;
      const back = await untilPolling(cluster, last, threshold, RAMP_TIMEOUT_MS, ctx.log);
      const backS = (performance.now() - k0) / 1000;
      const failures = await gens.all<{ failures: Record<string, number>[] }>({ cmd: 'fleetStats' });
      ctx.log(`  restart: answering after ${upS.toFixed(1)} s, every identity polling after ${backS.toFixed(1)} s; failures ${JSON.stringify(failures.map((f) => f.failures))}`);

      let fd: Record<string, unknown> | null = null;
      if (withFdLimit) {
        const victim2 = cluster.procs.get(`scheduler-${nodes}`)!;
        victim2.child.kill('SIGKILL');
        await victim2.exited;
        const started = startLowFdNode(cluster, last, url);
        lowFd = started.child;
        await until('the low-limit node to answer', () => health(cluster.schedulerUrl(last)), 120_000, 100);
        // Its connections fill up at once, since every identity is already retrying it.
        await until('the low-limit node to refuse', async () => ((await sample(cluster, last))?.refused ?? 0) > 0 || null, 120_000, 500);
        const pid = lowFd.pid ?? 0;
        const c0 = cpuSeconds(pid);
        const s0 = await sample(cluster, last);
        const w0 = performance.now();
        await sleep(windowMs);
        const s1 = await sample(cluster, last);
        const seconds = (performance.now() - w0) / 1000;
        const cpu = cpuSeconds(pid) - c0;
        const alive = lowFd.exitCode == null && lowFd.signalCode == null;
        const limitLines = started.logs.filter((l) => String(l.msg ?? '').startsWith('connection limit reached'));
        fd = {
          fdLimit: LOW_FD_LIMIT,
          maxConnections: started.logs.find((l) => l.msg === 'scheduler started')?.maxConnections ?? null,
          open: s1?.open ?? null,
          waiting: s1?.waiting ?? null,
          refusedPerSec: s0 && s1 ? round((s1.refused - s0.refused) / seconds, 0) : null,
          cpuPctOfCore: round((100 * cpu) / seconds, 1),
          alive,
          limitLogLines: limitLines.length,
          logLinesTotal: started.logs.length,
          errorsOnStderr: started.logs.filter((l) => l.stderr).length,
          sampleLine: limitLines[0]?.msg ?? null,
        };
        ctx.log(`  at ${LOW_FD_LIMIT} descriptors: ${JSON.stringify(fd)}`);
      }

      const perConn = (i: number): { cpuUsPerConnPerSec: number | null; rssKbPerConn: number | null; heapKbPerConn: number | null } => {
        const conns = loaded.nodes[i]!.open;
        return {
          cpuUsPerConnPerSec: round((1e6 * loaded.nodes[i]!.cpuSeconds) / loaded.seconds / conns, 2),
          rssKbPerConn: round(((loaded.nodes[i]!.rssMb - idle.nodes[i]!.rssMb) * 1024) / conns, 1),
          heapKbPerConn: round(((loaded.nodes[i]!.heapMb - idle.nodes[i]!.heapMb) * 1024) / conns, 1),
        };
      };
      const per = Array.from({ length: nodes }, (_, i) => perConn(i));
      const avg = (f: (x: (typeof per)[number]) => number | null): number => per.reduce((s, x) => s + (f(x) ?? 0), 0) / per.length;
      const nodeCpuPct = loaded.nodes.map((n) => (100 * n.cpuSeconds) / loaded.seconds);
      const idleCpuPct = idle.nodes.map((n) => (100 * n.cpuSeconds) / idle.seconds);
      const line =
        `${nodes} nodes x ${fmt(identities)} workers (${fmt(loaded.nodes.reduce((s, n) => s + n.open, 0))} connections): per node ` +
        `${fmt(Math.max(...nodeCpuPct), 1)}% of a core at most (${fmt(Math.max(...idleCpuPct), 1)}% idle), ${fmt(
          avg((x) => x.cpuUsPerConnPerSec),
          1,
        )} us CPU/s and ` +
        `${fmt(
          avg((x) => x.rssKbPerConn),
          1,
        )} KB RSS (${fmt(
          avg((x) => x.heapKbPerConn),
          1,
        )} KB heap) per connection; ` +
        `${rampDone ? 'all' : `NOT all (${ramp.map((r) => r.waiting).join(', ')})`} polling after ${fmt(rampS, 1)} s; ` +
        `restarted node answering after ${fmt(upS, 1)} s, then ${back.complete ? 'polled by all' : `polled by only ${back.waiting}`} ${fmt(back.seconds, 1)} s later` +
        (fd
          ? `; at ulimit -n ${LOW_FD_LIMIT}: holds ${String(fd.open)}, refuses ${String(fd.refusedPerSec)}/s at ${String(fd.cpuPctOfCore)}% of a core, ${String(fd.limitLogLines)} log line(s), ${fd.alive ? 'up' : 'CRASHED'}`
          : '') +
        ` [load average ${loadavg()[0]!.toFixed(1)}]`;
      return {
        line,
        figures: {
          nodes,
          identities,
          idle,
          loaded,
          perConnection: per,
          rampSeconds: round(rampS, 1),
          ramp,
          restart: { answeringSeconds: round(upS, 1), secondsFromRestart: round(backS, 1), afterAnswering: back, failures: failures.map((f) => f.failures) },
          generators: { processes: gens.pids.length, cpuPctOfCore: round((100 * genCpu) / loaded.seconds, 1), rssMb: round(genRss, 0) },
          fdLimit: fd,
          loadAverage: loadavg().map((l) => round(l, 1)),
        },
      };
    } finally {
      await gens.stop();
      if (lowFd && lowFd.exitCode == null) lowFd.kill('SIGKILL');
      await cluster.stop(5_000);
    }
  }, 2);
}

/** Each node's CPU seconds over a window of `ms`, and its memory and connections after it. */
async function measure(cluster: Cluster, nodes: number, ms: number): Promise<{ seconds: number; nodes: (NodeSample & { cpuSeconds: number })[] }> {
  const pids = Array.from({ length: nodes }, (_, i) => cluster.procs.get(`scheduler-${i + 1}`)!.child.pid ?? 0);
  const c0 = pids.map(cpuSeconds);
  const t0 = performance.now();
  await sleep(ms);
  const c1 = pids.map(cpuSeconds);
  const seconds = (performance.now() - t0) / 1000;
  const samples = await Promise.all(pids.map((_, i) => sample(cluster, i)));
  return {
    seconds: round(seconds, 1)!,
    nodes: samples.map((s, i) => ({ ...(s ?? { rssMb: 0, heapMb: 0, waiting: 0, open: 0, refused: 0 }), cpuSeconds: round(c1[i]! - c0[i]!, 2)! })),
  };
}

/** A node's own figures from /metrics (on a fresh connection), or null when it does not answer. */
async function sample(cluster: Cluster, i: number): Promise<NodeSample | null> {
  try {
    const res = await fetch(`${cluster.schedulerUrl(i)}/metrics`, { headers: { authorization: `Bearer ${WORKER_TOKEN}` }, signal: AbortSignal.timeout(10_000) });
    if (res.status !== 200) return null;
    const text = await res.text();
    const metric = (name: string): number => Number(new RegExp(`^fenceline_${name} (\\S+)`, 'm').exec(text)?.[1] ?? NaN);
    return {
      rssMb: round(metric('runtime_rss_bytes') / 1048576, 1)!,
      heapMb: round(metric('runtime_heap_used_bytes') / 1048576, 1)!,
      waiting: metric('workers_waiting'),
      open: metric('http_connections_open'),
      refused: metric('http_connections_refused_total'),
    };
  } catch {
    return null;
  }
}

async function health(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`, { signal: AbortSignal.timeout(5_000) })).ok;
  } catch {
    return false;
  }
}

/**
 * Waits until `threshold` workers poll node `i`, or `timeoutMs`; returns how many polled it
 * at the end and when, so a fleet that does not come back in time is a figure, not a crash.
 */
async function untilPolling(
  cluster: Cluster,
  i: number,
  threshold: number,
  timeoutMs: number,
  log: (m: string) => void,
): Promise<{ waiting: number; seconds: number; complete: boolean }> {
  const t0 = performance.now();
  let waiting = 0;
  let lastLog = t0;
  while (performance.now() - t0 < timeoutMs) {
    waiting = (await sample(cluster, i))?.waiting ?? waiting;
    if (waiting >= threshold) return { waiting, seconds: (performance.now() - t0) / 1000, complete: true };
    if (performance.now() - lastLog > 15_000) {
      lastLog = performance.now();
      log(`    node ${i + 1}: ${waiting} polling after ${((lastLog - t0) / 1000).toFixed(0)} s`);
    }
    await sleep(500);
  }
  return { waiting, seconds: (performance.now() - t0) / 1000, complete: false };
}

/** Node `i` again, on its port, under a descriptor limit of LOW_FD_LIMIT (the shell lowers it and becomes the node). */
function startLowFdNode(cluster: Cluster, i: number, databaseUrl: string): { child: ChildProcess; logs: Record<string, unknown>[] } {
  const child = spawn('sh', ['-c', `ulimit -n ${LOW_FD_LIMIT} && exec "$0" --import tsx "$1"`, process.execPath, join(REPO_ROOT, 'apps/scheduler/src/main.ts')], {
    cwd: REPO_ROOT,
    env: {
      ...process.env,
      ...cluster.commonEnv(),
      DATABASE_URL: databaseUrl,
      FENCELINE_NODE_ID: `scheduler-${i + 1}`,
      FENCELINE_SCHEDULER_PORT: String(cluster.opts.basePort + i),
      FENCELINE_LOG_LEVEL: 'info',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const logs: Record<string, unknown>[] = [];
  const collect = (stderr: boolean) => {
    let pending = '';
    return (d: Buffer): void => {
      pending += d.toString();
      const parts = pending.split('\n');
      pending = parts.pop()!;
      for (const p of parts) {
        try {
          logs.push({ ...(JSON.parse(p) as Record<string, unknown>), ...(stderr ? { stderr } : {}) });
        } catch {
          logs.push({ msg: p, ...(stderr ? { stderr } : {}) });
        }
      }
    };
  };
  child.stdout!.on('data', collect(false));
  child.stderr!.on('data', collect(true));
  return { child, logs };
}
