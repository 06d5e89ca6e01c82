import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';
import { createDatabase, DEFAULT_SERVER_URL, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { serverVersion } from '@fenceline/db/bench-support';
import { Cluster, REPO_ROOT, type ClusterOptions, type ManagedProcess, type ProcessSpec } from '../tools/start/cluster';

/** The server every case makes its databases on; main.ts puts the one it found or started into DATABASE_URL. */
export function adminUrl(): string {
  return process.env.DATABASE_URL ?? DEFAULT_SERVER_URL;
}

export interface BenchContext {
  quick: boolean;
  /** Prints a progress line (stderr, so stdout carries only the figures). */
  log: (msg: string) => void;
}

/** What every case returns: its one-line summary and the figures behind it. */
export interface CaseResult {
  name: string;
  line: string;
  figures: Record<string, unknown>;
  /** Figures that are a rate comparable to the store ceiling (jobs/s), for the ratio column. */
  jobsPerSec?: number;
  notes?: string[];
  /** Preformatted text (a query plan, a chart) shown in a code block under the case. */
  details?: string;
}

/** A fresh database for one case, dropped afterwards (kept with BENCH_KEEP_DB=1, for queries after the run), so cases never see each other's rows. */
export async function withDatabase<T>(fn: (db: { url: string; store: SqlStore }) => Promise<T>, max = 10): Promise<T> {
  const name = `fenceline_bench_${randomBytes(4).toString('hex')}`;
  const url = await createDatabase(adminUrl(), name);
  const store = await openStore({ databaseUrl: url, applicationName: 'fenceline-bench', max });
  try {
    return await fn({ url, store });
  } finally {
    await store.close().catch(() => undefined);
    if (!process.env.BENCH_KEEP_DB) await dropDatabase(adminUrl(), name).catch(() => undefined);
    else console.log(`kept database ${name}`);
  }
}

let nextPort = 19400 + Math.floor(Math.random() * 1000);

export const WORKER_TOKEN = randomBytes(18).toString('base64url');

/** A real cluster (scheduler and worker processes through tsx) on the given database. */
export function benchCluster(url: string, opts: Partial<ClusterOptions> & { schedulers: number; workers: number }): Cluster {
  const basePort = nextPort;
  nextPort += 10;
  return new ProfiledCluster({
    databaseUrl: url,
    workerToken: WORKER_TOKEN,
    basePort,
    output: process.env.BENCH_VERBOSE ? 'prefixed' : 'quiet',
    tasksModule: join(REPO_ROOT, 'bench', 'tasks.ts'),
    ...opts,
    env: {
      FENCELINE_LOG_LEVEL: 'warn',
      ...opts.env,
    },
  });
}

/**
 * BENCH_CPU_PROF=<dir> makes every scheduler and worker write a V8 CPU profile there when
 * it exits (node refuses --cpu-prof in NODE_OPTIONS, so the flag goes on the command line).
 */
class ProfiledCluster extends Cluster {
  override spawn(spec: ProcessSpec & { args?: string[]; cwd?: string }): ManagedProcess {
    const dir = process.env.BENCH_CPU_PROF;
    if (!dir || spec.args || spec.kind === 'console') return super.spawn(spec);
    const entry = spec.kind === 'scheduler' ? 'apps/scheduler/src/main.ts' : 'apps/worker/src/main.ts';
    return super.spawn({ ...spec, args: ['--cpu-prof', `--cpu-prof-dir=${dir}`, '--import', 'tsx', join(REPO_ROOT, entry)] });
  }
}

/** User + system CPU seconds a process has used so far, from /proc (0 if it is gone). */
export function cpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/**
 * CPU seconds the whole machine has spent busy so far (every core, every process: user,
 * nice, system, irq and softirq from /proc/stat), so a phase can say how loaded the
 * machine was, whoever loaded it; 0 where /proc/stat cannot be read.
 */
export function machineBusySeconds(): number {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0]!;
    const [user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).slice(1).map(Number);
    return ((user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0)) / 100;
  } catch {
    return 0;
  }
}

/** Resident memory of a process in MB, from /proc. */
export function rssMb(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

export function percentile(values: number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

export function median(values: number[]): number {
  return percentile(values, 50);
}

export function round(n: number | null | undefined, digits = 1): number | null {
  if (n == null || !Number.isFinite(n)) return null;
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}

export function fmt(n: number | null | undefined, digits = 0): string {
  if (n == null || !Number.isFinite(n)) return 'n/a';
  return n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export async function until<T>(what: string, probe: () => Promise<T | null | undefined | false>, timeoutMs: number, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

/** The machine and the code a run measured: every report carries them. */
export async function machineInfo(): Promise<Record<string, unknown>> {
  let commit = 'unknown';
  let dirty = false;
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: REPO_ROOT }).toString().trim();
    dirty = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], { cwd: REPO_ROOT }).toString().trim().length > 0;
  } catch {
    // Not a checkout; the report says unknown.
  }
  let postgres = 'unknown';
  await withDatabase(async ({ store }) => {
    postgres = await serverVersion(store.db);
  }, 1).catch(() => undefined);
  return {
    commit: dirty ? `${commit}+dirty` : commit,
    node: process.version,
    cores: cpus().length,
    cpuModel: cpus()[0]?.model ?? 'unknown',
    memoryGb: Math.round(totalmem() / 2 ** 30),
    postgres,
    loadAverageAtStart: (await import('node:os')).loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

/** The pid of a managed process (the node process itself: the cluster spawns node directly). */
export function pidOf(cluster: Cluster, name: string): number {
  const pid = cluster.procs.get(name)?.child.pid;
  if (!pid) throw new Error(`no pid for ${name}`);
  return pid;
}

/** Metrics of every scheduler of the cluster (from /metrics), summed over the nodes; 0 where absent. */
export async function schedulerMetrics(cluster: Cluster, keys: string[]): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const url of cluster.schedulerUrls()) {
    const text = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${WORKER_TOKEN}` } }).then(
      (r) => r.text(),
      () => '',
    );
    for (const key of keys) {
      const m = text.match(new RegExp(`^fenceline_${key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} (\\S+)$`, 'm'));
      out[key] = (out[key] ?? 0) + Number(m?.[1] ?? 0);
    }
  }
  return out;
}
