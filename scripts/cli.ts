import { DEFAULTS, FencelineError, parseDagId, parseRunId, type CatalogueStore, type ClusterStore, type RunReadStore, type WorkerCredentialStore } from '@fenceline/core';
import { openStore, type SqlStore } from '@fenceline/db';
import { readClusterFile } from './cluster-file';
import { readSpecFiles } from './spec-files';
import { WORKER_TOKEN_HELP, workerTokenCommand } from './worker-token';

const HELP = `fenceline: operate a fenceline cluster

Usage: npm run fenceline -- <command> [args]

Commands:
  apply <file.json|file.yaml>...   validate every file, then store them all or none (a changed spec becomes a new version)
  dags [--search TEXT] [--limit N] list DAGs with schedule, next run and version
  runs [DAG] [--limit N]           list recent runs, newest first
  trigger <DAG>                    queue a manual run now
  pause <DAG> | resume <DAG>       stop / restart scheduled runs of a DAG
  jobs <RUN_ID>                    a run's jobs with attempt, fence, holder and result
  shards                           shard leaders, epochs and lease expiry
  workers                          live workers and the leases they hold
${WORKER_TOKEN_HELP}
  help                             this text

The store is DATABASE_URL, or the embedded cluster started by \`npm start\` (.data/cluster.json).
Exit codes: 0 ok, 1 refused (the message names the reason), 2 usage error.`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(HELP);
    return command ? 0 : 2;
  }
  const databaseUrl = process.env.DATABASE_URL ?? (await readClusterFile())?.databaseUrl;
  if (!databaseUrl) {
    console.error('No store: set DATABASE_URL, or start the embedded cluster with `npm start` first.');
    return 2;
  }
  const store = await openStore({ databaseUrl, applicationName: 'fenceline-cli', max: 2 });
  try {
    return await run(store, command, rest);
  } catch (err) {
    if (err instanceof FencelineError) {
      console.error(`${err.code}: ${err.message}`);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}

function flag(args: string[], name: string): string | undefined {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function positional(args: string[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i]!.startsWith('--')) i++;
    else out.push(args[i]!);
  }
  return out;
}

function need(value: string | undefined, what: string): string {
  if (!value) throw new UsageError(`missing ${what}`);
  return value;
}

class UsageError extends Error {}

function fmt(d: Date | null | undefined): string {
  return d ? d.toISOString().replace('.000Z', 'Z') : '-';
}

/** What the commands use: the catalogue, the reads, the cluster, worker credentials, and storing many specs at once. */
type CliStore = CatalogueStore & RunReadStore & ClusterStore & WorkerCredentialStore & Pick<SqlStore, 'putDags'>;

async function run(store: CliStore, command: string, args: string[]): Promise<number> {
  switch (command) {
    case 'apply':
      return apply(store, positional(args));
    case 'dags': {
      const { rows, total } = await store.listDags({ search: flag(args, '--search'), limit: Number(flag(args, '--limit') ?? 50) });
      console.table(
        rows.map((d) => ({
          id: d.id,
          version: d.version,
          schedule: describeSchedule(d.spec.schedule),
          nextRunAt: d.paused ? 'paused' : fmt(d.nextRunAt),
          paused: d.paused,
          shard: d.shard,
        })),
      );
      console.log(`${rows.length} of ${total} DAGs`);
      return 0;
    }
    case 'runs': {
      const [dagId] = positional(args);
      const runs = await store.listRuns({ dagId: dagId === undefined ? undefined : parseDagId(dagId, 'DAG'), limit: Number(flag(args, '--limit') ?? 20) });
      console.table(
        runs.map((r) => ({
          id: r.id,
          dag: r.dagId,
          version: r.dagVersion,
          state: r.state,
          trigger: r.trigger,
          scheduledAt: fmt(r.scheduledAt),
          startedAt: fmt(r.startedAt),
          endedAt: fmt(r.endedAt),
        })),
      );
      return 0;
    }
    case 'trigger': {
      const run = await store.triggerRun(parseDagId(need(positional(args)[0], 'DAG id'), 'DAG'));
      console.log(`run ${run.id} of ${run.dagId} queued (version ${run.dagVersion})`);
      return 0;
    }
    case 'pause':
    case 'resume': {
      const dag = await store.setPaused(parseDagId(need(positional(args)[0], 'DAG id'), 'DAG'), command === 'pause');
      console.log(`${dag.id} ${dag.paused ? 'paused' : 'resumed'}; next run ${fmt(dag.nextRunAt)}`);
      return 0;
    }
    case 'jobs': {
      const runId = parseRunId(need(positional(args)[0], 'run id'), 'RUN_ID');
      const run = await store.getRun(runId);
      const jobs = await store.listJobs(runId);
      console.log(`run ${run.id} of ${run.dagId}@${run.dagVersion}: ${run.state}`);
      const rows = [];
      for (const j of jobs) {
        const result = await store.getResult(j.id);
        rows.push({
          job: j.id,
          task: j.taskId,
          state: j.state,
          attempt: `${j.attempt}/${j.maxAttempts}`,
          fence: j.fence,
          holder: j.holder ?? '-',
          leaseExpiresAt: fmt(j.leaseExpiresAt),
          result: result ? `${result.outcome} @fence ${result.fence}` : '-',
          error: j.lastError ?? '',
        });
      }
      console.table(rows);
      return 0;
    }
    case 'shards': {
      const shards = await store.listShards();
      console.table(shards.map((s) => ({ shard: s.shard, leader: s.holder ?? '(none)', epoch: s.epoch, expiresAt: fmt(s.expiresAt) })));
      return 0;
    }
    case 'workers': {
      const workers = await store.listWorkers(5 * 60_000);
      const leased = await store.listLeasedJobs();
      console.table(workers.map((w) => ({ id: w.id, slots: w.slots, leases: leased.filter((j) => j.holder === w.id).length, lastSeen: fmt(w.lastSeen), node: w.nodeId ?? '-' })));
      return 0;
    }
    case 'worker-token':
      return workerTokenCommand(store, args, (name) => flag(args, name));
    default:
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * Reads and validates every file before storing any, then stores them all in one
 * transaction: a bad file anywhere in the list leaves the store as it was.
 */
async function apply(store: CliStore, files: string[]): Promise<number> {
  if (files.length === 0) throw new UsageError('apply needs at least one file');
  const { specs, problems } = await readSpecFiles(files);
  if (problems.length > 0) {
    for (const problem of problems) {
      console.error(`${problem.file}: ${problem.message}`);
      for (const issue of problem.issues) console.error(`  - ${issue.path || '(spec)'}: ${issue.message}`);
    }
    const bad = new Set(problems.map((p) => p.file)).size;
    console.error(`nothing stored: ${bad} of ${files.length} ${files.length === 1 ? 'file has' : 'files have'} problems`);
    return 1;
  }
  const { shardCount } = await store.initCluster(DEFAULTS.shardCount);
  let results;
  try {
    results = await store.putDags(
      specs.map((s) => s.spec),
      shardCount,
    );
  } catch (err) {
    if (err instanceof FencelineError) throw err;
    // The driver's error quotes the statement; the reason underneath is what an operator can act on.
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : 'the store refused the write';
    console.error(`nothing stored: ${cause}`);
    return 1;
  }
  results.forEach((res, i) => {
    console.log(`${specs[i]!.file}: ${res.dagId} ${res.created ? `version ${res.version} stored` : `unchanged (version ${res.version})`}`);
  });
  return 0;
}

function describeSchedule(s: { kind: string; cron?: string; timezone?: string; everyMs?: number }): string {
  if (s.kind === 'cron') return `cron "${s.cron}" ${s.timezone}`;
  if (s.kind === 'interval') return `every ${s.everyMs} ms`;
  return 'manual';
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${HELP}`);
      process.exit(2);
    }
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  },
);
