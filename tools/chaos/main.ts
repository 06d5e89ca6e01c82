import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { capFor, DEFAULTS, parseDagId, seededRandom, type ShardLeaseRow } from '@fenceline/core';
import { type Store } from '@fenceline/core/store';
import { acquireServer, createDatabase, dropDatabase, openStore } from '@fenceline/db';
import { auditStore, sampleShares, terminateBackends, type AuditReport } from '@fenceline/db/audit';
import { Cluster, FAST_TTL_ENV, REPO_ROOT, sleep } from '../start/cluster';
import { RogueWorker } from './rogue';
import { chaosDags } from './workload';
import { auditEffects, openUserDatabase, type EffectsAudit } from './effects/audit';
import { startUserService } from './effects/service';
import { DEFAULT_NODES, haUnavailableReason, startFormation, type Formation } from '../ha/formation';
import { freePortBlock } from '../ha/ports';

const HELP = `npm run chaos -- [--short] [--seed N] [--minutes M] [--keep-db] [--ha]

Starts a real cluster (3 schedulers, 4 workers) on a fresh database in DATABASE_URL's
server, else in the one at postgres://postgres@127.0.0.1:5432/postgres, else in an
embedded PostgreSQL started for the soak and removed after it (so --keep-db keeps
nothing then). Runs a workload of sleep DAGs and injects, on a schedule drawn from the
seed: worker pauses (SIGSTOP past the lease TTL, then SIGCONT; also every 10 s the holder
of an effects job, by turns with and without the helpers), SIGKILL of shard leaders
(then restart), SIGKILL of workers mid-job, termination of every database connection,
and a rogue worker writing forged and replayed fences, and the holder's fence under its own session. Two DAGs make effects outside the scheduler (a row in a user database and a
call to a user service), one through @fenceline/effects and one without. Then faults stop,
the workload drains and the store is audited, and the effects are counted per job key:
with the helpers no duplicate and none under a lower fence; without them, the duplicates
the helpers prevent (a run with none there fails: it has not shown the difference).
With --ha the store is a pg_auto_failover formation started for the soak (a primary and
a synchronous standby; needs postgresql-15-auto-failover), and halfway through the
fault phase the primary's machine is lost (its keeper and postmaster get SIGKILL): the
standby is promoted and every process must carry on through the multi-host URL.
Exits 1 on any violation, naming the seed; 0 otherwise. Full soak: 20 minutes; --short: 2.`;

const TTL_MS = Number(FAST_TTL_ENV.FENCELINE_LEASE_TTL_MS);
const SLOTS = 4;
const WORKERS = 4;
const SCHEDULERS = 3;

interface Options {
  seed: number;
  minutes: number;
  keepDb: boolean;
  ha: boolean;
}

function parseArgs(argv: string[]): Options {
  if (argv.includes('--help')) {
    console.log(HELP);
    process.exit(0);
  }
  const value = (name: string): string | undefined => {
    const i = argv.indexOf(name);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const seed = Number(value('--seed') ?? Math.floor(Math.random() * 2 ** 31));
  const minutes = Number(value('--minutes') ?? (argv.includes('--short') ? 2 : 20));
  if (!Number.isInteger(seed) || !(minutes > 0)) {
    console.error(HELP);
    process.exit(2);
  }
  return { seed, minutes, keepDb: argv.includes('--keep-db'), ha: argv.includes('--ha') };
}

type FaultKind = 'pause-worker' | 'pause-effect-holder' | 'kill-leader' | 'kill-worker' | 'cut-database' | 'rogue-writes' | 'lose-store-primary';

async function main(): Promise<number> {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.ha) {
    const unavailable = await haUnavailableReason();
    if (unavailable) {
      console.error(`--ha: ${unavailable}`);
      return 2;
    }
    // The monitor's port and one per data node.
    const formation = await startFormation({ basePort: await freePortBlock(28_000, 2_000, DEFAULT_NODES + 1) });
    console.log(`store: pg_auto_failover formation ${formation.url}`);
    try {
      return await soak(opts, formation.url, formation);
    } finally {
      await formation.stop();
    }
  }
  const server = await acquireServer();
  if (server.source === 'embedded') console.log(`no DATABASE_URL and no PostgreSQL at 127.0.0.1:5432: started an embedded one at ${server.url}`);
  try {
    return await soak(opts, server.url);
  } finally {
    await server.release();
  }
}

async function soak(opts: Options, adminUrl: string, formation?: Formation): Promise<number> {
  const rng = seededRandom(opts.seed);
  const random = () => rng.next();
  const pick = <T>(items: T[]): T => items[Math.floor(random() * items.length)]!;
  const dbName = `fenceline_chaos_${randomBytes(4).toString('hex')}`;
  const databaseUrl = await createDatabase(adminUrl, dbName);
  console.log(`chaos soak: seed ${opts.seed}, ${opts.minutes} min, database ${dbName}`);

  const store: Store = await openStore({ databaseUrl, applicationName: 'fenceline-chaos', max: 3 });
  const { shardCount } = await store.initCluster(4);
  const dags = chaosDags(random);
  for (const spec of [...dags.scheduled, dags.fanout, dags.flaky, ...dags.effects]) await store.putDag(spec, shardCount);
  // The user's side: a database of its own (never cut: the faults are the scheduler's) and
  // a service, written to by the effects DAGs' jobs.
  const userDbName = `${dbName}_user`;
  const userDbUrl = await createDatabase(adminUrl, userDbName);
  const userSql = await openUserDatabase(userDbUrl);
  const service = await startUserService(userSql);

  const cluster = new Cluster({
    databaseUrl,
    workerToken: randomBytes(18).toString('base64url'),
    schedulers: SCHEDULERS,
    workers: WORKERS,
    workerSlots: SLOTS,
    basePort: 18400 + Math.floor(random() * 1000),
    output: process.env.FENCELINE_CHAOS_VERBOSE ? 'prefixed' : 'quiet',
    tasksModule: join(REPO_ROOT, 'tools', 'chaos', 'effects', 'tasks.ts'),
    env: {
      ...FAST_TTL_ENV,
      FENCELINE_WORKER_HEARTBEAT_INTERVAL_MS: '2000',
      FENCELINE_SHARDS: String(shardCount),
      FENCELINE_SHUTDOWN_GRACE_MS: '2000',
      FENCELINE_CHAOS_USER_DB: userDbUrl,
      FENCELINE_CHAOS_SERVICE_URL: service.url,
      // The soak's audit judges I6 against the strict cap; lending, on by default, lets a
      // DAG hold more through I11, which the simulator checks, so the soak keeps it off.
      FENCELINE_LEND: 'off',
    },
  });
  await cluster.start();

  const faults: Record<FaultKind, number> = {
    'pause-worker': 0,
    'pause-effect-holder': 0,
    'kill-leader': 0,
    'kill-worker': 0,
    'cut-database': 0,
    'rogue-writes': 0,
    'lose-store-primary': 0,
  };
  const storeFailovers: { promotedMs: number }[] = [];
  const failovers: { shard: number; ms: number }[] = [];
  const violations: string[] = [];
  const rogue = new RogueWorker(store, () => cluster.schedulerUrls().filter((_, i) => alive(`scheduler-${i + 1}`)), cluster.opts.workerToken, random);
  const down = new Set<string>();
  const paused = new Set<string>();
  const pending: Promise<void>[] = [];
  const alive = (name: string): boolean => !down.has(name);
  const cap = capFor(SLOTS * WORKERS, DEFAULTS.capFraction);

  const endAt = Date.now() + opts.minutes * 60_000;
  let nextTrigger = 0;
  let nextFault = Date.now() + 5_000;
  // Besides the pauses drawn at random, every 10 s the worker holding an effects job is
  // paused past its lease, by turns a job without the helpers and one with them, so that
  // every run, short ones included, has late effects on both sides to count.
  let nextEffectPause = Date.now() + 8_000;
  let effectPauses = 0;
  // One loss of the store's primary, halfway through: the formation has no third node to
  // take over a second time.
  let storeLossAt = formation ? Date.now() + (opts.minutes * 60_000) / 2 : Number.POSITIVE_INFINITY;
  while (Date.now() < endAt) {
    if (Date.now() >= nextTrigger) {
      nextTrigger = Date.now() + 12_000;
      // Keep the backlog bounded: a new manual run only when none is still queued, so the
      // load stays feasible however long the soak runs and the drain has a fixed bound.
      for (const dagId of [dags.fanout.id, dags.flaky.id, ...dags.effects.map((d) => d.id)].map((id) => parseDagId(id))) {
        const queued = await store.listRuns({ dagId, state: 'queued', limit: 1 }).catch(() => [{}]);
        if (queued.length === 0) await store.triggerRun(dagId).catch(() => undefined);
      }
    }
    // I6: no DAG holds more leases than the cap of the full pool (the pool only shrinks under faults).
    const sample = await sampleShares(databaseUrl, 60_000).catch(() => null);
    for (const [dagId, held] of sample?.held ?? []) {
      if (held <= cap) continue;
      const pools = await Promise.all(
        cluster.schedulerUrls().map((u) =>
          fetch(`${u}/metrics`, { headers: { authorization: `Bearer ${cluster.opts.workerToken}` } })
            .then((r) => r.text())
            .then(
              (t) => t.match(/fenceline_pool_slots (\d+)/)?.[1] ?? '?',
              () => 'down',
            ),
        ),
      );
      const leases = (await store.listLeasedJobs().catch(() => [])).filter((j) => j.dagId === dagId).map((j) => `${j.id}@${j.holder}/f${j.fence}`);
      violations.push(`I6: ${dagId} held ${held} leases, cap ${cap} (pool slots seen by each scheduler: ${pools.join(', ')}; leases ${leases.join(' ')})`);
    }
    if (Date.now() >= nextFault) {
      nextFault = Date.now() + 4_000 + Math.floor(random() * 6_000);
      const kind = pick<FaultKind>(['pause-worker', 'pause-worker', 'kill-leader', 'kill-worker', 'cut-database', 'rogue-writes']);
      // A fault that needs the store may find it failing over: it is skipped, not fatal.
      const injected = await inject(kind).catch(() => false);
      if (injected) faults[kind]++;
    }
    if (Date.now() >= nextEffectPause) {
      nextEffectPause = Date.now() + 10_000;
      const effectsDag = dags.effects[effectPauses++ % 2]!.id;
      if (await pauseHolderOf(effectsDag).catch(() => false)) faults['pause-effect-holder']++;
    }
    if (formation && Date.now() >= storeLossAt) {
      storeLossAt = Number.POSITIVE_INFINITY;
      const lostAt = Date.now();
      const lost = await formation.killPrimary({ machine: true });
      faults['lose-store-primary']++;
      console.log(`lost the store's primary ${lost.name}`);
      pending.push(
        formation.waitForNewPrimary(lost, 120_000).then(
          (promoted) => {
            storeFailovers.push({ promotedMs: Date.now() - lostAt });
            console.log(`${promoted.name} promoted ${Date.now() - lostAt} ms after the loss`);
            // The lost machine comes back and rejoins as a standby. Meanwhile the other
            // standby is the new primary's synchronous one, so results keep being accepted.
            return formation.restartNode(lost);
          },
          (err: unknown) => {
            violations.push(`store: no standby promoted within 120 s of losing ${lost.name}: ${(err as Error).message}`);
          },
        ),
      );
    }
    await sleep(500);
  }

  /** Pauses one live worker holding a job of `dagId` long enough for another to take the job and finish its work. */
  async function pauseHolderOf(dagId: string): Promise<boolean> {
    const holders = (await store.listLeasedJobs()).filter((j) => j.dagId === dagId && j.holder).map((j) => j.holder!);
    const candidates = [...new Set(holders)].filter((w) => alive(w) && !paused.has(w) && cluster.procs.has(w));
    if (candidates.length === 0) return false;
    const w = pick(candidates);
    paused.add(w);
    cluster.signal(w, 'SIGSTOP');
    pending.push(
      sleep(TTL_MS * 2 + 3_000).then(() => {
        cluster.signal(w, 'SIGCONT');
        paused.delete(w);
      }),
    );
    return true;
  }

  async function inject(kind: FaultKind): Promise<boolean> {
    const workers = [...Array(WORKERS).keys()].map((i) => `worker-${i + 1}`).filter((w) => alive(w) && !paused.has(w));
    switch (kind) {
      case 'pause-worker': {
        if (workers.length === 0) return false;
        const w = pick(workers);
        const ms = Math.floor(TTL_MS * (1.3 + random() * 1.5));
        paused.add(w);
        cluster.signal(w, 'SIGSTOP');
        pending.push(
          sleep(ms).then(() => {
            cluster.signal(w, 'SIGCONT');
            paused.delete(w);
          }),
        );
        return true;
      }
      case 'kill-worker': {
        if (workers.length <= 1) return false;
        const w = pick(workers);
        const i = Number(w.split('-')[1]) - 1;
        down.add(w);
        cluster.signal(w, 'SIGKILL');
        pending.push(
          sleep(1000 + random() * 2000).then(() => {
            cluster.startWorker(i);
            down.delete(w);
          }),
        );
        return true;
      }
      case 'kill-leader': {
        const shards = await store.listShards();
        const leaders = [...new Set(shards.map((s) => s.holder).filter((h): h is string => !!h && alive(h)))];
        const standing = [...Array(SCHEDULERS).keys()].map((i) => `scheduler-${i + 1}`).filter(alive);
        if (leaders.length === 0 || standing.length <= 1) return false;
        const victim = pick(leaders);
        // Each shard's epoch at the kill: any leader under a later epoch has taken over,
        // the victim's own restarted process included (it comes back with a new token).
        const led = new Map(shards.filter((s) => s.holder === victim).map((s) => [s.shard, s.epoch]));
        const i = Number(victim.split('-')[1]) - 1;
        const killedAt = Date.now();
        down.add(victim);
        cluster.signal(victim, 'SIGKILL');
        pending.push(watchFailover(led, victim, killedAt));
        pending.push(
          sleep(2000 + random() * 2000).then(() => {
            cluster.startScheduler(i);
            down.delete(victim);
          }),
        );
        return true;
      }
      case 'cut-database':
        await terminateBackends(adminUrl, dbName);
        return true;
      case 'rogue-writes':
        return (await rogue.strike()) > 0;
      case 'lose-store-primary':
        // Injected once, on its own schedule (above), never drawn at random.
        return false;
      case 'pause-effect-holder':
        // On its own schedule (above): it needs an effects job leased at the time.
        return false;
    }
  }

  async function watchFailover(epochs: Map<number, number>, victim: string, killedAt: number): Promise<void> {
    // A read on a connection the soak just cut may fail, or hang: either counts as a failed read.
    const readShards = (): Promise<ShardLeaseRow[] | null> => Promise.race([store.listShards().catch(() => null), sleep(2000).then(() => null)]);
    const open = new Set(epochs.keys());
    let last: ShardLeaseRow[] = [];
    let reads = 0;
    let failedReads = 0;
    while (open.size > 0 && Date.now() - killedAt < 60_000) {
      const rows = await readShards();
      reads++;
      if (rows === null) failedReads++;
      else last = rows;
      for (const r of rows ?? []) {
        if (open.has(r.shard) && r.holder && r.epoch > epochs.get(r.shard)!) {
          failovers.push({ shard: r.shard, ms: Date.now() - killedAt });
          open.delete(r.shard);
        }
      }
      await sleep(100);
    }
    // The polls above may all have failed (the soak cuts the database's connections): judge
    // what is left by the store's own record of when each shard was taken, read with retries.
    for (let attempt = 0; open.size > 0 && attempt < 10; attempt++) {
      const rows = await readShards();
      if (rows === null) {
        failedReads++;
        await sleep(1000);
        continue;
      }
      last = rows;
      for (const r of rows) {
        const tookMs = r.acquiredAt ? r.acquiredAt.getTime() - killedAt : Number.POSITIVE_INFINITY;
        if (open.has(r.shard) && r.holder && r.epoch > epochs.get(r.shard)! && tookMs <= 60_000) {
          failovers.push({ shard: r.shard, ms: tookMs });
          open.delete(r.shard);
        }
      }
      break;
    }
    // What the last successful read showed, so a failure says whether leadership stood still or the reads failed.
    const seen = (shard: number): string => {
      const r = last.find((x) => x.shard === shard);
      return r
        ? `holder ${r.holder ?? '-'} epoch ${r.epoch} (was ${epochs.get(shard)}) acquired ${r.acquiredAt?.toISOString() ?? '-'} expires ${r.expiresAt?.toISOString() ?? '-'}`
        : 'not read';
    };
    for (const s of open)
      violations.push(
        `I5: shard ${s} had no leader under a new epoch 60 s after ${victim} was killed at ${new Date(killedAt).toISOString()}; last read: ${seen(s)}; ${failedReads} of ${reads} reads failed`,
      );
  }

  // Faults off: let every paused process go, bring back the dead, stop new runs and drain.
  console.log('faults off: draining the workload');
  await Promise.all(pending);
  for (const name of cluster.procs.keys()) cluster.signal(name, 'SIGCONT');
  for (const spec of [...dags.scheduled, dags.fanout, dags.flaky, ...dags.effects]) await store.setPaused(parseDagId(spec.id), true);
  const drainDeadline = Date.now() + 5 * 60_000;
  let report: AuditReport = await auditStore(databaseUrl);
  while ((report.nonTerminalJobs > 0 || report.nonTerminalRuns > 0) && Date.now() < drainDeadline) {
    await sleep(2000);
    report = await auditStore(databaseUrl);
  }
  await cluster.stop(5000);
  await store.close();
  const effects = await auditEffects(userSql, service.applied);
  await service.close();
  await userSql.end({ timeout: 5 });

  if (report.nonTerminalRuns > 0 || report.nonTerminalJobs > 0)
    violations.push(`I7: ${report.nonTerminalRuns} runs and ${report.nonTerminalJobs} jobs not terminal 5 minutes after faults stopped`);
  for (const d of report.duplicateRuns) violations.push(`I4: ${d.dagId} has ${d.runs} runs at ${d.scheduledAt}`);
  for (const r of report.resultsFromRevokedHolders)
    violations.push(`I3: job ${r.jobId} result fence ${r.resultFence} by ${r.resultWorker}, job fence ${r.jobFence} holder ${r.jobHolder}`);
  for (const r of report.doubleAccepted) violations.push(`I3: job ${r.jobId} had ${r.accepted} accepted completions`);
  for (const r of report.reusedFences) violations.push(`I2: job ${r.jobId} was granted fence ${r.fence} ${r.grants} times`);
  for (const id of report.succeededWithoutResult) violations.push(`I3: job ${id} succeeded but its accepted result is gone`);
  for (const g of report.missedSlots) violations.push(`I5: ${g.dagId} skipped ${Math.round(g.gapMs / g.everyMs) - 1} slots after ${g.after}`);
  for (const a of rogue.accepted) violations.push(`I3: rogue write accepted: ${a}`);
  for (const [sink, byMode] of Object.entries(effects) as [string, EffectsAudit['table']][]) {
    const g = byMode.guarded;
    if (g.duplicates > 0 || g.lowerFence > 0)
      violations.push(`I12: the ${sink} took ${g.duplicates} duplicate effects and ${g.lowerFence} under a lower fence through the helpers`);
  }
  if (effects.table.guarded.keys === 0) violations.push('effects: no effect of the guarded DAG reached the user table');
  // The proof is zero duplicates with the helpers and some without them in the same run: a
  // run whose naive DAG took none at either sink has not shown what the helpers prevent.
  const naiveDuplicates = effects.table.naive.duplicates + effects.service.naive.duplicates;
  if (naiveDuplicates === 0) violations.push('effects: not shown: the DAG without the helpers took no duplicate at either sink, so this run proves nothing about them');

  console.log('\nfaults injected');
  console.table(faults);
  console.log('writes refused by the store (event log), by reason');
  console.table(report.refusalsByReason);
  console.log('rogue writes refused, by reason');
  console.table(rogue.refused);
  console.log('lifecycle events');
  console.table(report.faultEvents);
  const sorted = failovers.map((f) => f.ms).sort((a, b) => a - b);
  if (formation) console.log(`store failovers: ${storeFailovers.map((f) => `promoted after ${f.promotedMs} ms`).join(', ') || 'none completed'}`);
  console.log('effects outside the scheduler, per job key (user table and user service), with and without @fenceline/effects');
  console.table({
    'table, with helpers': effects.table.guarded,
    'table, without': effects.table.naive,
    'service, with helpers': effects.service.guarded,
    'service, without': effects.service.naive,
  });
  console.log(
    naiveDuplicates > 0
      ? `effects: shown: ${effects.table.guarded.duplicates + effects.service.guarded.duplicates} duplicates with the helpers, ${naiveDuplicates} without them`
      : 'effects: not shown (no duplicate without the helpers in this run)',
  );
  console.log(`failovers: ${failovers.length}, takeover ms min ${sorted[0] ?? '-'} median ${sorted[Math.floor(sorted.length / 2)] ?? '-'} max ${sorted.at(-1) ?? '-'}`);

  if (!opts.keepDb) await dropDatabase(adminUrl, dbName).catch(() => undefined);
  if (!opts.keepDb) await dropDatabase(adminUrl, userDbName).catch(() => undefined);
  if (violations.length > 0) {
    console.error(`\n${violations.length} violation(s):`);
    for (const v of violations.slice(0, 50)) console.error(`  ${v}`);
    console.error(`\nreplay: npm run chaos -- --seed ${opts.seed} --minutes ${opts.minutes}`);
    return 1;
  }
  console.log(`\nno violations (seed ${opts.seed})`);
  return 0;
}

main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err instanceof Error ? err.stack : String(err));
    process.exit(3);
  },
);
