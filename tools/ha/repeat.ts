import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DagSpecInput } from '@fenceline/core';
import { parseDagId } from '@fenceline/core';
import { createDatabase, openStore } from '@fenceline/db';
import { auditStore, jobProgress, runProgress, storeActivity, type AuditReport } from '@fenceline/db/audit';
import { Cluster, FAST_TTL_ENV, REPO_ROOT } from '../start/cluster';
import { violationsOf, withDeadline } from './drill';
import { DEFAULT_NODES, startFormation, type FormationNode } from './formation';

/**
 * The repeated failover drill: one cluster on one pg_auto_failover formation runs a DAG of
 * `jobs` jobs, and while each run is under way the primary is killed, `rounds` times in a
 * row. Each round must finish its run within `resumeWithinMs` of the kill; the formation is
 * settled again (a lost machine's keeper is started anew and rejoins as a secondary, unless
 * `rejoin` is false) before the next kill. At the end the store is audited: every job succeeded once, no fence
 * granted twice, no accepted result lost.
 */
export interface RepeatOptions {
  basePort: number;
  rounds: number;
  /**
   * `postmaster`: kill -9 of the primary's postmaster alone (its keeper restarts it, or the
   * monitor fails over); `machine`: its keeper and postmaster together, as a lost machine.
   */
  kill: 'postmaster' | 'machine';
  /**
   * With `machine`: start the lost machine's keeper again once its standby is promoted (the
   * default). false leaves each killed node lost for good, so every round takes a node
   * away: at most nodes - 2 rounds, each leaving the primary a synchronous standby.
   */
  rejoin?: boolean;
  /** Data nodes in the formation (default 3, see startFormation). */
  nodes?: number;
  /** Jobs per run (one DAG, triggered once a round). */
  jobs?: number;
  jobMs?: number;
  /** The primary is killed once this share of the round's jobs has succeeded. */
  killAtFraction?: number;
  /** How long a round may take from the kill to its last job's end. */
  resumeWithinMs?: number;
  /** Stop at the first round that does not resume in time, rather than carry on. */
  stopOnFailure?: boolean;
  /** Keep the cluster processes' logs also when every round passed. */
  keepLogs?: boolean;
  schedulers?: number;
  workers?: number;
  workerSlots?: number;
  /** Extra environment for the cluster's processes. */
  env?: Record<string, string>;
  log?: (line: string) => void;
}

export interface RoundReport {
  round: number;
  killed: string;
  /** The node that was primary once the round's run had finished (the killed one when the keeper brought it back). */
  primaryAfter: string | null;
  /** With `machine`: from the kill to the monitor reporting another node primary. */
  promotedMs: number | null;
  /** From the kill to the first poll that saw a result written after it (polled every 250 ms). */
  resumedMs: number | null;
  /** From the kill to the round's last job's end; null when it did not end within resumeWithinMs. */
  doneMs: number | null;
  /** What the store's sessions were doing when a round did not resume in time. */
  stuck?: { app: string; state: string | null; wait: string | null; query: string }[];
}

export interface RepeatReport {
  kill: RepeatOptions['kill'];
  jobsPerRound: number;
  rounds: RoundReport[];
  /** Rounds whose run did not finish within resumeWithinMs of the kill. */
  failedRounds: number[];
  audit: AuditReport;
  violations: string[];
  /** Where each process's log was written (removed when every round passed, unless keepLogs). */
  logDir: string;
}

const DAG_ID = 'ha-repeat';

export async function runRepeatDrill(opts: RepeatOptions): Promise<RepeatReport> {
  const log = opts.log ?? (() => {});
  const jobs = opts.jobs ?? 200;
  const resumeWithinMs = opts.resumeWithinMs ?? 60_000;
  const rejoin = opts.kill === 'postmaster' || (opts.rejoin ?? true);
  const nodes = opts.nodes ?? DEFAULT_NODES;
  if (!rejoin && opts.rounds > nodes - 2) {
    throw new RangeError(
      `rounds must be at most ${nodes - 2} with ${nodes} nodes and no rejoin (each round loses a node for good and the primary needs a standby), got ${opts.rounds}`,
    );
  }
  const logDir = await mkdtemp(join(tmpdir(), 'fenceline-ha-repeat-logs-'));
  // A busy machine brings a node up slowly; the default 90 s was seen to run out at load 35.
  const formation = await startFormation({ basePort: opts.basePort, nodes, log, startTimeoutMs: 300_000 }).catch(async (err: unknown) => {
    // No process has written there yet: a formation that did not come up leaves nothing behind.
    await rm(logDir, { recursive: true, force: true });
    throw err;
  });
  let cluster: Cluster | undefined;
  try {
    log(`formation up: ${formation.url}`);
    // The first kill waits for a settled primary and secondary too, as every later one does:
    // a formation just up may still replicate asynchronously, and a write it acknowledged
    // then can be lost with the primary (seen in the first round: a result accepted, then gone).
    await formation.waitForHealthy(300_000);
    const databaseUrl = await createDatabase(formation.url, `fenceline_ha_${randomBytes(4).toString('hex')}`);
    const store = await openStore({ databaseUrl, applicationName: 'fenceline-drill', max: 2 });
    const shards = Number(FAST_TTL_ENV.FENCELINE_SHARDS);
    await store.initCluster(shards);
    await store.putDag(repeatDag(jobs, opts.jobMs ?? 400), shards);
    await store.close();
    cluster = new Cluster({
      databaseUrl,
      workerToken: randomBytes(18).toString('base64url'),
      basePort: opts.basePort + 10,
      schedulers: opts.schedulers ?? 2,
      workers: opts.workers ?? 2,
      workerSlots: opts.workerSlots ?? 10,
      output: 'files',
      logDir,
      // A busy machine (the drill runs two formations' worth of processes) starts a node slowly.
      startTimeoutMs: 180_000,
      tasksModule: join(REPO_ROOT, 'examples', 'tasks.ts'),
      env: { ...FAST_TTL_ENV, FENCELINE_CAP_PERCENT: '100', FENCELINE_LOG_LEVEL: 'info', ...opts.env },
    });
    await cluster.start();
    const rounds: RoundReport[] = [];
    for (let round = 1; round <= opts.rounds; round++) {
      const report = await runRound(round, databaseUrl, formation, jobs, resumeWithinMs, { ...opts, rejoin }, log);
      rounds.push(report);
      log(
        `round ${round}: killed ${report.killed}'s ${opts.kill}; first result ${fmt(report.resumedMs)}, all ${jobs} done ${fmt(report.doneMs)} after the kill; primary now ${report.primaryAfter ?? '?'}`,
      );
      if (report.doneMs === null) {
        for (const s of report.stuck ?? []) log(`  ${s.app} ${s.state ?? '-'} ${s.wait ?? '-'} ${s.query.replace(/\s+/g, ' ')}`);
        if (opts.stopOnFailure) break;
        // Let the stuck round end before the next one, so each round counts its own run.
        await waitFor('the stuck round to end', 600_000, async () => (await progressOf(databaseUrl)) === 0);
      }
    }
    await cluster.stop(5000);
    cluster = undefined;
    const audit = await auditStore(databaseUrl);
    const failedRounds = rounds.filter((r) => r.doneMs === null).map((r) => r.round);
    const violations = violationsOf(audit, jobs * rounds.length);
    if (failedRounds.length === 0 && violations.length === 0 && !opts.keepLogs) await rm(logDir, { recursive: true, force: true });
    return { kill: opts.kill, jobsPerRound: jobs, rounds, failedRounds, audit, violations, logDir };
  } finally {
    if (cluster) await cluster.stop(5000).catch(() => undefined);
    await formation.stop();
  }
}

async function runRound(
  round: number,
  databaseUrl: string,
  formation: Awaited<ReturnType<typeof startFormation>>,
  jobs: number,
  resumeWithinMs: number,
  opts: RepeatOptions,
  log: (line: string) => void,
): Promise<RoundReport> {
  const runId = await triggerWithRetry(databaseUrl);
  // Each read has its own deadline: a read that never settles (seen once, right after a
  // kill, inside the driver) must not stop the drill; it counts as no answer.
  const progress = () => withDeadline(runProgress(databaseUrl, runId), 10_000).catch(() => null);
  const killAt = Math.max(1, Math.round(jobs * (opts.killAtFraction ?? 0.3)));
  await waitFor(`round ${round}: ${killAt} jobs to succeed`, 180_000, async () => ((await progress())?.succeeded ?? 0) >= killAt);
  const killedAt = Date.now();
  log(`round ${round}: killing the primary at ${new Date(killedAt).toISOString()}`);
  const killed: FormationNode = await formation.killPrimary({ machine: opts.kill === 'machine' });
  // A lost machine comes back once its standby has taken over, and rejoins as a standby of
  // the new primary; with two nodes the store accepts results again only then. Without
  // rejoin it stays lost, and the promotion is only timed.
  let promotedMs: number | null = null;
  const rejoined =
    opts.kill === 'machine'
      ? formation
          .waitForNewPrimary(killed, resumeWithinMs)
          .then(async (p) => {
            promotedMs = Date.now() - killedAt;
            log(`round ${round}: ${p.name} promoted ${fmt(promotedMs)} after the kill`);
            if (opts.rejoin ?? true) await formation.restartNode(killed);
          })
          .catch((err: Error) => log(`round ${round}: ${err.message}`))
      : Promise.resolve();
  let base: number | null = null;
  let resumedMs: number | null = null;
  let doneMs: number | null = null;
  const deadline = killedAt + resumeWithinMs;
  while (Date.now() < deadline) {
    const p = await progress();
    if (p) {
      if (base === null) base = p.succeeded;
      else if (resumedMs === null && p.succeeded > base) resumedMs = Date.now() - killedAt;
      if (p.unfinished === 0) {
        doneMs = Date.now() - killedAt;
        resumedMs ??= doneMs;
        break;
      }
    }
    await sleep(250);
  }
  const stuck = doneMs === null ? await withDeadline(storeActivity(databaseUrl), 10_000).catch(() => []) : undefined;
  await rejoined;
  if (opts.kill === 'machine' && (opts.rejoin ?? true)) await formation.restartNode(killed);
  // The next kill waits for a primary with caught-up, synchronous secondaries, as an operator would.
  await formation.waitForHealthy(300_000).catch((err: Error) => log(`round ${round}: ${err.message}`));
  const primaryAfter = (await formation.primary().catch(() => undefined))?.name ?? null;
  return { round, killed: killed.name, primaryAfter, promotedMs, resumedMs, doneMs, ...(stuck ? { stuck } : {}) };
}

/** Triggers the round's run; the store may still be settling after the last round's failover. */
async function triggerWithRetry(databaseUrl: string): Promise<string> {
  let last: unknown;
  for (let attempt = 0; attempt < 60; attempt++) {
    const store = await withDeadline(openStore({ databaseUrl, applicationName: 'fenceline-drill', max: 1 }), 20_000).catch((err: unknown) => {
      last = err;
      return null;
    });
    if (store) {
      try {
        const run = await withDeadline(store.triggerRun(parseDagId(DAG_ID)), 20_000);
        return run.id;
      } catch (err) {
        last = err;
      } finally {
        await withDeadline(store.close(), 10_000).catch(() => undefined);
      }
    }
    await sleep(1000);
  }
  throw new Error(`could not trigger a run: ${(last as Error)?.message ?? String(last)}`);
}

async function progressOf(databaseUrl: string): Promise<number | null> {
  return (await withDeadline(jobProgress(databaseUrl), 10_000).catch(() => null))?.unfinished ?? null;
}

function repeatDag(tasks: number, jobMs: number): DagSpecInput {
  return {
    id: DAG_ID,
    name: 'Repeated failover drill',
    schedule: { kind: 'manual' },
    tasks: Array.from({ length: tasks }, (_, i) => ({ id: `t${i}`, type: 'sleep', config: { durationMs: jobMs } })),
  } as DagSpecInput;
}

function fmt(ms: number | null): string {
  return ms === null ? 'never' : `${(ms / 1000).toFixed(1)} s`;
}

async function waitFor(what: string, timeoutMs: number, probe: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(250);
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
