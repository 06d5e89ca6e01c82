import { FencelineError, parseDagId, parseRunId, type DagSpec, type RunRow } from '@fenceline/core';
import { type RunActionRow } from '@fenceline/core/store';
import { actionRequestOf, ACTION_COMMANDS, reportAction } from './cli-actions';
import { backfillCommand, httpBackfills } from './cli-backfill';
import { flag, hasFlag, instantFlag, need, positional, UsageError } from './cli-args';
import { ApiClient, ApiError, ApiUnreachable, isTransient } from './cli-http-client';
import { commandLine, requestKeyOf, sendOnce } from './cli-once';
import { printApplied, printDags, printJobs, printPaused, printRuns, printSpecProblems, printTriggered, type DagLine, type JobLine } from './cli-output';
import { limitRequest, printLimitDeleted, printLimits, printLimitSet } from './cli-limits';
import { paramIssueLines, triggerParams } from './cli-params';
import { readSpecFiles } from './spec-files';

/**
 * The CLI's commands over the console's HTTP API (`--url`), for a machine that holds an API
 * token but no database credentials. Each command checks its arguments as the store path
 * does, asks the endpoint of the same change, and prints the same lines from its answer;
 * the API itself checks roles and writes the audit entries, with the token's owner as the
 * actor.
 */

/** The commands the API covers; every other one needs the store. */
export const HTTP_COMMANDS = new Set(['apply', 'dags', 'runs', 'trigger', 'pause', 'resume', 'jobs', 'cancel', 'clear', 'retry', 'mark', 'limit', 'backfill']);

/** Thrown for a command the API does not cover: the CLI says so in one line and exits 2. */
export class NeedsDatabase extends Error {
  constructor(command: string) {
    super(`${command} needs the database (DATABASE_URL) and is not available over --url`);
  }
}

/**
 * The API's address and token from --url and --token, or else FENCELINE_URL and
 * FENCELINE_TOKEN (a flag wins over its variable), with both flags taken out of the
 * arguments wherever they stand, so they may come before or after the command.
 */
export function connectionOf(argv: string[]): { url: string | undefined; token: string | undefined; args: string[] } {
  const args: string[] = [];
  let url: string | undefined;
  let token: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg !== '--url' && arg !== '--token') {
      args.push(arg);
      continue;
    }
    const value = argv[++i];
    if (value === undefined || value.startsWith('--')) throw new UsageError(`${arg} needs a value`);
    if (arg === '--url') url = value;
    else token = value;
  }
  url ??= process.env.FENCELINE_URL || undefined;
  token ??= process.env.FENCELINE_TOKEN || undefined;
  if (url !== undefined && !/^https?:\/\/[^/\s]+/.test(url)) throw new UsageError(`--url: must be an http:// or https:// address, such as http://127.0.0.1:7480, got "${url}"`);
  return { url, token, args };
}

/** Runs a command against the HTTP API, printing a refusal as the store path prints the store's. */
export async function overHttp(url: string, token: string | undefined, command: string, args: string[]): Promise<number> {
  if (token === undefined) throw new UsageError('--url needs an API token: --token TOKEN or FENCELINE_TOKEN (make one on the Tokens page or with `api-token create`)');
  try {
    return await runOverHttp(new ApiClient(url, token), command, args);
  } catch (err) {
    if (err instanceof NeedsDatabase) {
      console.error(err.message);
      return 2;
    }
    if (err instanceof ApiUnreachable) {
      console.error(err.message);
      return 1;
    }
    if (err instanceof ApiError) {
      console.error(`${err.code}: ${err.message}`);
      for (const line of paramIssueLines({ issues: err.issues })) console.error(line);
      return 1;
    }
    if (err instanceof FencelineError) {
      console.error(`${err.code}: ${err.message}`);
      return 1;
    }
    throw err;
  }
}

const dagPath = (id: string) => `/dags/${encodeURIComponent(id)}`;

async function runOverHttp(api: ApiClient, command: string, args: string[]): Promise<number> {
  if (!HTTP_COMMANDS.has(command)) {
    if (ACTION_COMMANDS.has(command) || KNOWN_DATABASE_COMMANDS.has(command)) throw new NeedsDatabase(command);
    throw new UsageError(`unknown command "${command}"`);
  }
  const idempotencyKey = flag(args, '--idempotency-key');
  switch (command) {
    case 'apply':
      return apply(api, positional(args), idempotencyKey);
    case 'dags': {
      const page = (await api.get('/dags', { search: flag(args, '--search'), limit: flag(args, '--limit') ?? '50' })) as { rows: DagLine[]; total: number };
      printDags(page.rows, page.total);
      return 0;
    }
    case 'runs': {
      const [dagId] = positional(args);
      const page = (await api.get('/runs', {
        dag: dagId === undefined ? undefined : parseDagId(dagId, 'DAG'),
        state: flag(args, '--state'),
        trigger: flag(args, '--trigger'),
        from: instantFlag(args, '--from')?.toISOString(),
        to: instantFlag(args, '--to')?.toISOString(),
        order: hasFlag(args, '--oldest') ? 'oldest' : 'newest',
        limit: flag(args, '--limit') ?? '20',
        cursor: flag(args, '--cursor'),
      })) as { rows: RunRow[]; next: string | null };
      printRuns(page.rows, page.next);
      return 0;
    }
    case 'trigger': {
      const dagId = parseDagId(need(positional(args)[0], 'DAG id'), 'DAG');
      const wantsParams = args.includes('--param') || args.includes('--params');
      // As on the store path, the declared types turn each --param's text into a value.
      const declared = wantsParams ? ((await api.get(dagPath(dagId))) as { dag: { spec: DagSpec } }).dag.spec.params : undefined;
      const params = wantsParams ? triggerParams(args, declared) : undefined;
      const body = params === undefined ? {} : { params };
      const run = (await sendOnce({
        key: requestKeyOf(idempotencyKey),
        send: (key) => api.post(`${dagPath(dagId)}/trigger`, { body, idempotencyKey: key }),
        transient: isTransient,
        command: commandLine('trigger', args),
      })) as RunRow;
      printTriggered(run);
      return 0;
    }
    case 'pause':
    case 'resume': {
      const dagId = parseDagId(need(positional(args)[0], 'DAG id'), 'DAG');
      printPaused((await api.post(`${dagPath(dagId)}/${command}`)) as { id: string; paused: boolean; nextRunAt: Date | null });
      return 0;
    }
    case 'jobs': {
      const runId = parseRunId(need(positional(args)[0], 'run id'), 'RUN_ID');
      const { run, jobs } = (await api.get(`/runs/${runId}`)) as { run: RunRow; jobs: JobLine[] };
      printJobs(run, jobs);
      return 0;
    }
    case 'limit':
      return limitOverHttp(api, args);
    case 'backfill':
      return backfillCommand(httpBackfills(api), args);
    default: {
      const req = actionRequestOf(command, args);
      const body = { kind: req.kind, taskIds: req.taskIds, downstream: req.downstream, reason: req.reason };
      const action = (await sendOnce({
        key: requestKeyOf(idempotencyKey),
        send: (key) => api.post(`/runs/${req.runId}/actions`, { body, idempotencyKey: key }),
        transient: isTransient,
        command: commandLine(command, args),
      })) as RunActionRow;
      return reportAction(action, async (id) => (await api.get(`/actions/${id}`)) as RunActionRow, hasFlag(args, '--no-wait'));
    }
  }
}

type LimitAnswer = { name: string; capacity: number; used: number; waiting: number };
const limitPath = (name: string) => `/limits/${encodeURIComponent(name)}`;

/** The `limit` commands over the API: the same checks and lines as against the store; the API audits each change. */
async function limitOverHttp(api: ApiClient, args: string[]): Promise<number> {
  const req = limitRequest(args);
  const list = async () => ((await api.get('/limits')) as { limits: LimitAnswer[] }).limits;
  switch (req.sub) {
    case 'set': {
      const before = (await list()).find((l) => l.name === req.name);
      printLimitSet((await api.request('PUT', limitPath(req.name), { body: { capacity: req.capacity } })) as LimitAnswer, before?.capacity);
      return 0;
    }
    case 'list':
      printLimits(await list());
      return 0;
    case 'delete':
      await api.request('DELETE', limitPath(req.name), {});
      printLimitDeleted(req.name);
      return 0;
  }
}

/** Commands that exist but read or change what only the store holds (shards, workers, people, credentials, a run's action list). */
const KNOWN_DATABASE_COMMANDS = new Set(['shards', 'workers', 'actions', 'user', 'sessions', 'api-token', 'worker-token']);

/**
 * Reads and validates every file before sending any, as the store path does. The API
 * stores one spec a request, so the files are sent in order and the first refusal stops
 * the rest; the files before it stay stored, and the command says which.
 */
async function apply(api: ApiClient, files: string[], idempotencyKey: string | undefined): Promise<number> {
  if (files.length === 0) throw new UsageError('apply needs at least one file');
  const { specs, problems } = await readSpecFiles(files);
  if (problems.length > 0) {
    printSpecProblems(problems, files.length);
    return 1;
  }
  for (const [i, { file, spec }] of specs.entries()) {
    try {
      printApplied(file, (await api.post('/dags', { body: spec, idempotencyKey })) as { dagId: string; version: number; created: boolean });
    } catch (err) {
      if (i > 0) console.error(`${file}: not stored; the ${i} file${i === 1 ? '' : 's'} before it ${i === 1 ? 'was' : 'were'} stored`);
      else console.error(`${file}: not stored`);
      throw err;
    }
  }
  return 0;
}
