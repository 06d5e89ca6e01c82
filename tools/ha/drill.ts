import { randomBytes } from 'node:crypto';
import type { DagSpecInput } from '@fenceline/core';
import { parseDagId } from '@fenceline/core';
import { createDatabase, openStore } from '@fenceline/db';
import { auditStore, firstLeaseGrantedAfter, jobProgress, timelineFencings, type AuditReport } from '@fenceline/db/audit';
import { Cluster, FAST_TTL_ENV, REPO_ROOT } from '../start/cluster';
import { startFormation, type Formation } from './formation';
import { join } from 'node:path';

/**
 * The store-failover drill: a real cluster on a pg_auto_failover formation runs a few
 * thousand jobs; halfway through, the primary's postmaster is killed with SIGKILL. The
 * secondary is promoted, every process finds it through the multi-host URL, and once the
 * jobs have drained the store is audited. The cluster test, the bench's store-failover
 * case and the chaos soak's --ha fault share it.
 */
export interface DrillOptions {
  basePort: number;
  /** DAGs of `tasksPerDag` jobs each, all triggered at once. */
  dags: number;
  tasksPerDag: number;
  /** How long each job sleeps. */
  jobMs: number;
  /** The primary is killed once this share of the jobs has succeeded. */
  killAtFraction: number;
  /**
   * Kill the primary's keeper with its postmaster, as a lost machine (the default); false
   * kills the postmaster alone, which the keeper restarts, so the monitor may keep it primary.
   */
  loseMachine?: boolean;
  /**
   * Start the lost machine's keeper again once its standby is promoted, so it rejoins as a
   * standby (the default). false leaves it lost for good: with three nodes or more the
   * promoted primary keeps a synchronous standby and results resume without it.
   */
  rejoin?: boolean;
  /** Data nodes in the formation (default 3, see startFormation). */
  nodes?: number;
  /**
   * Replicate asynchronously (the standby leaves the quorum) before the load, so the
   * promoted standby may lack acknowledged writes; the store's timeline fencing must
   * still keep every fence unique.
   */
  asynchronous?: boolean;
  schedulers?: number;
  workers?: number;
  workerSlots?: number;
  /** How long the jobs may take to drain after the kill. */
  drainTimeoutMs?: number;
  log?: (line: string) => void;
}

export interface DrillReport {
  jobs: number;
  succeededAtKill: number;
  killedNode: string;
  promotedNode: string;
  /** From the kill to the monitor reporting the new primary. */
  killToPromotionMs: number;
  /** From the kill to the first lease the new primary granted (by the store's own clock). */
  killToFirstLeaseMs: number | null;
  /** From the kill to the last job's end. */
  killToDrainedMs: number;
  /** How many times the store raised its fences for a new timeline. */
  timelineFencings: number;
  audit: AuditReport;
  /** What the audit found wrong; empty when every guarantee held. */
  violations: string[];
}

export async function runFailoverDrill(opts: DrillOptions): Promise<DrillReport> {
  const log = opts.log ?? (() => {});
  const formation = await startFormation({ basePort: opts.basePort, ...(opts.nodes ? { nodes: opts.nodes } : {}) });
  let cluster: Cluster | undefined;
  try {
    log(`formation up: ${formation.url}`);
    if (opts.asynchronous) {
      await formation.setSynchronous(false);
      log('replication is asynchronous');
    }
    const databaseUrl = await createDatabase(formation.url, `fenceline_ha_${randomBytes(4).toString('hex')}`);
    const store = await openStore({ databaseUrl, applicationName: 'fenceline-drill', max: 2 });
    const shards = Number(FAST_TTL_ENV.FENCELINE_SHARDS);
    await store.initCluster(shards);
    for (let d = 0; d < opts.dags; d++) await store.putDag(drillDag(d, opts.tasksPerDag, opts.jobMs), shards);
    cluster = new Cluster({
      databaseUrl,
      workerToken: randomBytes(18).toString('base64url'),
      basePort: opts.basePort + 10,
      schedulers: opts.schedulers ?? 2,
      workers: opts.workers ?? 4,
      workerSlots: opts.workerSlots ?? 25,
      output: process.env.FENCELINE_TEST_VERBOSE ? 'prefixed' : 'quiet',
      tasksModule: join(REPO_ROOT, 'examples', 'tasks.ts'),
      // An asynchronous standby never confirms a commit, so that drill lets the store accept
      // results without one: what it checks is that the timeline fencing keeps fences unique.
      env: { ...FAST_TTL_ENV, FENCELINE_CAP_PERCENT: '100', FENCELINE_LOG_LEVEL: 'info', ...(opts.asynchronous ? { FENCELINE_DB_SYNC_STANDBY: 'off' } : {}) },
    });
    await cluster.start();
    for (let d = 0; d < opts.dags; d++) await store.triggerRun(parseDagId(drillDagId(d)));
    const jobs = opts.dags * opts.tasksPerDag;
    await store.close();

    // The drill's own reads open a connection each time, so a read cut by the kill is
    // just tried again; how the product's own pools recover is what is under test.
    const progress = () => withDeadline(jobProgress(databaseUrl), 10_000).catch(() => null);
    await waitFor(`${Math.round(opts.killAtFraction * 100)}% of the jobs to succeed`, 180_000, async () => ((await progress())?.succeeded ?? 0) >= jobs * opts.killAtFraction);
    const succeededAtKill = (await progress())?.succeeded ?? 0;
    const killedAt = Date.now();
    const killed = await formation.killPrimary({ machine: opts.loseMachine ?? true });
    log(`killed ${killed.name}'s ${(opts.loseMachine ?? true) ? 'machine' : 'postmaster'} with ${succeededAtKill} of ${jobs} jobs done`);
    const promoted = await formation.waitForNewPrimary(killed, 120_000);
    const killToPromotionMs = Date.now() - killedAt;
    log(`${promoted.name} promoted after ${killToPromotionMs} ms`);
    // The lost machine comes back, as an operator brings it or its replacement up: it
    // rejoins as a standby of the new primary. With two nodes only then does the store
    // accept results again (a primary alone acknowledges commits that no standby holds).
    if ((opts.loseMachine ?? true) && (opts.rejoin ?? true)) await formation.restartNode(killed);
    await waitFor('every job to end', opts.drainTimeoutMs ?? 300_000, async () => (await progress())?.unfinished === 0);
    const killToDrainedMs = Date.now() - killedAt;
    const firstLease = await readAgain(() => firstLeaseGrantedAfter(databaseUrl, new Date(killedAt)));
    await cluster.stop(5000);
    cluster = undefined;
    const audit = await readAgain(() => auditStore(databaseUrl));
    const fencings = await readAgain(() => timelineFencings(databaseUrl));
    return {
      jobs,
      succeededAtKill,
      killedNode: killed.name,
      promotedNode: promoted.name,
      killToPromotionMs,
      killToFirstLeaseMs: firstLease ? firstLease.getTime() - killedAt : null,
      killToDrainedMs,
      timelineFencings: fencings,
      audit,
      violations: violationsOf(audit, jobs),
    };
  } finally {
    if (cluster) await cluster.stop(5000).catch(() => undefined);
    await formation.stop();
  }
}

export function violationsOf(audit: AuditReport, jobs: number): string[] {
  const v: string[] = [];
  for (const r of audit.reusedFences) v.push(`fence ${r.fence} of job ${r.jobId} was granted ${r.grants} times`);
  for (const id of audit.succeededWithoutResult) v.push(`job ${id} succeeded but its accepted result is gone`);
  for (const r of audit.resultsFromRevokedHolders) v.push(`job ${r.jobId} kept a result of fence ${r.resultFence}, its lease is fence ${r.jobFence}`);
  for (const r of audit.doubleAccepted) v.push(`job ${r.jobId} had ${r.accepted} accepted completions`);
  for (const d of audit.duplicateRuns) v.push(`${d.dagId} has ${d.runs} runs at ${d.scheduledAt}`);
  if (audit.nonTerminalJobs > 0 || audit.nonTerminalRuns > 0) v.push(`${audit.nonTerminalJobs} jobs and ${audit.nonTerminalRuns} runs did not finish`);
  if (audit.succeededJobs !== jobs) v.push(`${audit.succeededJobs} of ${jobs} jobs succeeded`);
  return v;
}

function drillDagId(d: number): string {
  return `ha-drill-${d}`;
}

function drillDag(d: number, tasks: number, jobMs: number): DagSpecInput {
  return {
    id: drillDagId(d),
    name: `Failover drill ${d}`,
    schedule: { kind: 'manual' },
    tasks: Array.from({ length: tasks }, (_, i) => ({ id: `t${i}`, type: 'sleep', config: { durationMs: jobMs } })),
  } as DagSpecInput;
}

/** `p`, or a rejection once `ms` have passed without it settling: a drill's read must never wait forever. */
export function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms)));
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

/**
 * A read of the audit, tried again for up to 60 s: after the failover the other nodes
 * restart to follow the new primary (with three nodes, the standby left and the lost
 * machine coming back), and a connection that meets one of them starting up is refused
 * with 57P03 ("the database system is starting up") instead of going on to the primary.
 */
async function readAgain<T>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      return await withDeadline(read(), 20_000);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

export type { Formation };
