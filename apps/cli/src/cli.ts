import { DEFAULTS, FencelineError, parseDagId, parseRunId, redactSecrets, type RunRow } from '@fenceline/core';
import {
  type AuditStore,
  type CatalogueStore,
  type NotificationStore,
  type ClusterStore,
  type PeopleStore,
  type ResourceLimitStore,
  type RunActionStore,
  type RunReadStore,
  type WorkerCredentialStore,
} from '@fenceline/core/store';
import { openStore, type SqlStore } from '@fenceline/db';
import { attemptHistory, offerOfMeta } from '@fenceline/db/console';
import { ACTION_COMMANDS, ACTION_HELP, runActionCommand } from './cli-actions';
import { BACKFILL_HELP, backfillCommand, storeBackfills } from './cli-backfill';
import { LIMIT_HELP, limitCommand } from './cli-limits';
import { NOTIFY_HELP, notifyCommand } from './cli-notify';
import { cliAudit, PEOPLE_COMMANDS, PEOPLE_HELP, runPeople } from './cli-people';
import { flag, fmt, hasFlag, instantFlag, need, positional, UsageError } from './cli-args';
import { printApplied, printDags, printJobs, printPaused, printRuns, printSpecProblems, printTriggered } from './cli-output';
import { paramIssueLines, triggerParams } from './cli-params';
import { connectionOf, overHttp } from './cli-http';
import { cliKeyOwner, commandLine, lostInTransit, requestKeyOf, sendOnce } from './cli-once';
import { readClusterFile } from './cluster-file';
import { readSpecFiles } from './spec-files';
import { WORKER_TOKEN_HELP, workerTokenCommand } from './worker-token';

const HELP = `fenceline: operate a fenceline cluster

Usage: fenceline <command> [args]   (in the repository: npx fenceline, or npm run fenceline --)

Commands:
  apply <file.json|file.yaml>... [--idempotency-key K]
                                   validate every file, then store them all or none (a changed spec becomes a new version)
  dags [--search TEXT] [--limit N] list DAGs with schedule, next run and version
  runs [DAG] [--state S] [--trigger T] [--from ISO] [--to ISO] [--oldest] [--limit N] [--cursor C]
                                   runs by scheduled time, newest first, a page at a time
  trigger <DAG> [--param NAME=VALUE]... [--params JSON] [--idempotency-key K]
                                   queue a manual run now, with values for the DAG's declared params
                                   (each VALUE read as the param's type; the rest take their defaults)
  pause <DAG> | resume <DAG>       stop / restart scheduled runs of a DAG
${BACKFILL_HELP}
  jobs <RUN_ID>                    a run's params and jobs with attempt, fence, holder and result
  shards                           shard leaders, epochs and lease expiry
  workers                          live workers with pool, labels and the leases they hold
${ACTION_HELP}
${LIMIT_HELP}
${NOTIFY_HELP}
${PEOPLE_HELP}

${WORKER_TOKEN_HELP}
  help                             this text

Options:
  --url URL                        talk to the console's HTTP API at URL (such as http://127.0.0.1:7480) instead of the store;
                                   FENCELINE_URL when not given. Over --url: apply, dags, runs, trigger, pause, resume, jobs,
                                   cancel, clear, retry, mark and limit; any other command needs the database and exits 2
  --token TOKEN                    the API token (flt_...) sent as Authorization: Bearer with --url; FENCELINE_TOKEN when not given
  --idempotency-key KEY            on apply, trigger, backfill, cancel, clear, retry and mark: a repeated request with the same KEY
                                   (1 to 100 letters, digits, _ or -) stores nothing and prints the first answer; sent as
                                   the Idempotency-Key header over --url (against the store, apply takes it with one file).
                                   Without it, trigger, backfill, cancel, clear, retry and mark make a key of their own: a request that
                                   gets no answer or a server error is sent again with that key (3 tries in all), so a retry
                                   never does it twice, and if every try fails the command to repeat it with the key is printed

The store is DATABASE_URL, or the embedded cluster started by \`npm start\` (.data/cluster.json); with --url
(or FENCELINE_URL) the CLI needs neither and goes through the HTTP API as the token's owner.
Exit codes: 0 ok, 1 refused (the message names the reason) or the API cannot be reached, 2 usage error or a
command not available over --url.`;

async function main(argv: string[]): Promise<number> {
  const { url, token, args } = connectionOf(argv);
  const [command, ...rest] = args;
  if (!command || command === 'help' || command === '--help' || command === '-h') {
    console.log(HELP);
    return command ? 0 : 2;
  }
  if (url !== undefined) return overHttp(url, token, command, rest);
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
      for (const line of paramIssueLines(err.details)) console.error(line);
      return 1;
    }
    throw err;
  } finally {
    await store.close();
  }
}

/** What the commands use: the catalogue, the reads, the cluster, people, the audit log, worker credentials, resource limits, notifications, and storing many specs at once. */
type CliStore = CatalogueStore &
  RunActionStore &
  RunReadStore &
  ClusterStore &
  PeopleStore &
  AuditStore &
  WorkerCredentialStore &
  ResourceLimitStore &
  NotificationStore &
  Pick<SqlStore, 'putDags' | 'db'>;

async function run(store: CliStore, command: string, args: string[]): Promise<number> {
  switch (command) {
    case 'apply':
      return apply(store, positional(args), flag(args, '--idempotency-key'));
    case 'dags': {
      const { rows, total } = await store.listDags({ search: flag(args, '--search'), limit: Number(flag(args, '--limit') ?? 50) });
      printDags(
        rows.map((d) => ({ ...d, schedule: d.spec.schedule })),
        total,
      );
      return 0;
    }
    case 'runs': {
      const [dagId] = positional(args);
      const page = await store.pageRuns({
        dagId: dagId === undefined ? undefined : parseDagId(dagId, 'DAG'),
        state: flag(args, '--state') as RunRow['state'] | undefined,
        trigger: flag(args, '--trigger'),
        scheduledFrom: instantFlag(args, '--from'),
        scheduledBefore: instantFlag(args, '--to'),
        order: hasFlag(args, '--oldest') ? 'oldest' : 'newest',
        limit: Number(flag(args, '--limit') ?? 20),
        cursor: flag(args, '--cursor'),
      });
      printRuns(page.rows, page.next);
      return 0;
    }
    case 'trigger': {
      const dagId = parseDagId(need(positional(args)[0], 'DAG id'), 'DAG');
      const wantsParams = args.includes('--param') || args.includes('--params');
      // The declared types turn each --param's text into a value; a DAG without params needs no read.
      const params = wantsParams ? triggerParams(args, (await store.getDag(dagId)).spec.params) : undefined;
      const run = await sendOnce({
        key: requestKeyOf(flag(args, '--idempotency-key')),
        send: (requestKey) => store.triggerRun(dagId, { params, requestKey, requestOwner: cliKeyOwner() }),
        transient: lostInTransit,
        command: commandLine('trigger', args),
      });
      await cliAudit(store, { action: 'dag.triggered', dagId: run.dagId, details: { runId: run.id, params: run.params } });
      printTriggered(run);
      return 0;
    }
    case 'pause':
    case 'resume': {
      const dagId = parseDagId(need(positional(args)[0], 'DAG id'), 'DAG');
      const before = await store.getDag(dagId);
      const dag = await store.setPaused(dagId, command === 'pause');
      if (before.paused !== dag.paused) await cliAudit(store, { action: dag.paused ? 'dag.paused' : 'dag.resumed', dagId: dag.id });
      printPaused(dag);
      return 0;
    }
    case 'jobs': {
      const runId = parseRunId(need(positional(args)[0], 'run id'), 'RUN_ID');
      const run = await store.getRun(runId);
      const [jobs, results] = await Promise.all([store.listJobs(runId), store.listRunResults(runId)]);
      const byJob = new Map(results.map((r) => [r.jobId, r]));
      const history = await attemptHistory(store.db, runId, jobs);
      const rows = jobs.map((j) => ({ ...j, result: byJob.get(j.id) ?? null, history: history.get(j.id) }));
      printJobs(run, rows);
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
      console.table(
        workers.map((w) => {
          // An older worker sent no offer: it is in the default pool, as the schedulers treat it.
          const { offer } = offerOfMeta(w.meta);
          return {
            id: w.id,
            pool: offer.pool,
            labels: offer.labels.join(',') || '-',
            slots: w.slots,
            leases: leased.filter((j) => j.holder === w.id).length,
            lastSeen: fmt(w.lastSeen),
            node: w.nodeId ?? '-',
          };
        }),
      );
      return 0;
    }
    case 'backfill':
      return backfillCommand(storeBackfills(store), args);
    case 'limit':
      return limitCommand(store, args);
    case 'notify':
      return notifyCommand(store, args);
    case 'worker-token':
      return workerTokenCommand(store, args, (name) => flag(args, name));
    default:
      if (PEOPLE_COMMANDS.has(command)) return runPeople(store, command, args);
      if (ACTION_COMMANDS.has(command)) return runActionCommand(store, command, args);
      throw new UsageError(`unknown command "${command}"`);
  }
}

/**
 * Reads and validates every file before storing any, then stores them all in one
 * transaction: a bad file anywhere in the list leaves the store as it was.
 */
async function apply(store: CliStore, files: string[], requestKey: string | undefined): Promise<number> {
  if (files.length === 0) throw new UsageError('apply needs at least one file');
  // The store keeps a request key with one DAG's put, and a many-file apply is one transaction of many puts.
  if (requestKey !== undefined && files.length > 1) throw new UsageError('--idempotency-key: apply against the store takes one file with a key');
  const { specs, problems } = await readSpecFiles(files);
  if (problems.length > 0) {
    printSpecProblems(problems, files.length);
    return 1;
  }
  const { shardCount } = await store.initCluster(DEFAULTS.shardCount);
  let results: { dagId: string; version: number; created: boolean; repeated?: boolean }[];
  try {
    results =
      requestKey === undefined
        ? await store.putDags(
            specs.map((s) => s.spec),
            shardCount,
          )
        : [await store.putDag(specs[0]!.spec, shardCount, { requestKey, requestOwner: cliKeyOwner() })];
  } catch (err) {
    if (err instanceof FencelineError) throw err;
    // The driver's error quotes the statement; the reason underneath is what an operator can act on.
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : 'the store refused the write';
    console.error(`nothing stored: ${cause}`);
    return 1;
  }
  for (const res of results) {
    // A repeated key answers what the first apply stored, which that apply already audited.
    if (res.created && res.repeated !== true) await cliAudit(store, { action: 'dag.applied', dagId: res.dagId, details: { version: res.version } });
  }
  results.forEach((res, i) => printApplied(specs[i]!.file, res));
  return 0;
}

/**
 * What the CLI prints for an error that is not a refusal: a driver's error quotes the
 * statement and its parameters, so the reason underneath it is printed instead, and never
 * a stack.
 */
function unexpected(err: unknown): string {
  if (!(err instanceof Error)) return `failed: ${redactSecrets(String(err))}`;
  return `failed: ${redactSecrets(err.cause instanceof Error ? err.cause.message : err.message)}`;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    if (err instanceof UsageError) {
      console.error(`${err.message}\n\n${HELP}`);
      process.exit(2);
    }
    console.error(unexpected(err));
    process.exit(1);
  },
);
