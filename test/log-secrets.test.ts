import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDagId } from '@fenceline/core';
import { refuseChannelInserts } from '@fenceline/db/audit';
import { Cluster, REPO_ROOT } from '../tools/start/cluster';
import { startApiHttp } from '../apps/web/test/support/api-http';
import { serveRoute } from '../apps/web/test/support/serve-route';
import { signInThroughRoute } from '../apps/web/test/support/route-sign-in';
import { runCli, type CliOutcome } from './support/cli-process';
import { eventually, FAST_ENV } from './support/cluster-fixture';
import { Receiver } from './support/webhook-receiver';
import { registerSecret, runLogFile } from './support/run-logs';

/**
 * Secrets stay out of every process's log. A real flow runs with secrets the test knows: a
 * worker credential the worker process registers with, an API token and a console session
 * the console is called with, and a webhook channel with a secret and a URL that carries a
 * token in its path and its query. The scheduler delivers to that URL, failing first; and
 * channel creations fail in the store unexpectedly (a trigger PostgreSQL runs on the insert
 * refuses it), through the API and through the console's own procedures, so the error
 * paths that once quoted the statement's parameters run. Then every line the scheduler,
 * the worker, the console and the CLI printed is searched for each secret.
 */

const dagId = parseDagId('secret-keeper');
const hookSecret = `whsec_${randomBytes(24).toString('base64')}`;
const pathToken = `p${randomBytes(12).toString('hex')}`;
const queryToken = `q${randomBytes(12).toString('hex')}`;
const receiver = new Receiver(hookSecret);

let api: Awaited<ReturnType<typeof startApiHttp>>;
let trpc: Awaited<ReturnType<typeof serveRoute>>;
let cluster: Cluster;
let token: string;
let cookie: string;
let worker: { token: string; secret: string };
const cliRuns: CliOutcome[] = [];
/** What the console (this process, which serves its routes) wrote to stdout and stderr. */
const consoleOutput: string[] = [];
const writes = { out: process.stdout.write.bind(process.stdout), err: process.stderr.write.bind(process.stderr) };
const LOG_METHODS = ['log', 'info', 'warn', 'error', 'debug'] as const;
const logMethods = Object.fromEntries(LOG_METHODS.map((m) => [m, console[m]])) as Record<(typeof LOG_METHODS)[number], (...args: unknown[]) => void>;

beforeAll(async () => {
  // Everything the console process writes, kept (and still written) from here on.
  process.stdout.write = ((chunk: unknown, ...rest: unknown[]) => {
    consoleOutput.push(String(chunk));
    return (writes.out as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stdout.write;
  process.stderr.write = ((chunk: unknown, ...rest: unknown[]) => {
    consoleOutput.push(String(chunk));
    return (writes.err as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;
  // The console logs through console.*, which the test runner takes over before it reaches stdout.
  for (const m of LOG_METHODS) {
    console[m] = (...args: unknown[]) => {
      consoleOutput.push(args.map((a) => (typeof a === 'string' ? a : JSON.stringify(a))).join(' ') + '\n');
      logMethods[m](...args);
    };
  }
  await receiver.start();
  api = await startApiHttp();
  const { POST } = await import('../apps/web/src/app/api/trpc/[trpc]/route');
  trpc = await serveRoute((req) => POST(req));
  token = await api.tokenFor('admin');
  cookie = await signInThroughRoute(POST, api.store, 'admin');
  const issued = await runCli(process.env.DATABASE_URL!, 'worker-token', 'create', '--pool', 'default');
  cliRuns.push(issued);
  const credential = /token \(shown only now\): (\S+)/.exec(issued.stdout)?.[1];
  expect(credential, issued.stdout).toBeDefined();
  worker = { token: credential!, secret: credential!.split('.').pop()! };
  for (const [what, value] of [
    ['the webhook secret', hookSecret],
    ['the channel URL path token', pathToken],
    ['the channel URL query token', queryToken],
    ['an API token', token],
    ['a console session cookie', cookie.split('=')[1]!],
    ['a worker credential', worker.token],
    ['a worker credential secret', worker.secret],
  ] as const)
    registerSecret(what, value);
  cluster = new Cluster({
    tee: runLogFile,
    databaseUrl: process.env.DATABASE_URL!,
    workerToken: worker.token,
    basePort: 19_900 + Math.floor(Math.random() * 400),
    schedulers: 1,
    workers: 0,
    output: 'quiet',
    tasksModule: join(REPO_ROOT, 'examples', 'tasks.ts'),
    env: { ...FAST_ENV, FENCELINE_WORKER_AUTH: 'credentials', FENCELINE_NOTIFY_CHECK_INTERVAL_MS: '500' },
  });
  await cluster.start();
  // The worker takes its id from its credential's pool, as an issued credential needs.
  cluster.startWorker(0, { FENCELINE_WORKER_ID: '' });
}, 180_000);

afterAll(async () => {
  process.stdout.write = writes.out;
  process.stderr.write = writes.err;
  for (const m of LOG_METHODS) console[m] = logMethods[m];
  await cluster?.stop(5_000);
  await trpc?.close();
  await api?.stop();
  await receiver.stop();
}, 60_000);

async function apiPost(path: string, body: unknown): Promise<{ status: number; text: string }> {
  const res = await fetch(`${api.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  return { status: res.status, text: await res.text() };
}

describe('no process logs a secret, a token or a whole channel URL', () => {
  it('runs a flow with known secrets, fails channel creation in the store, and finds none of them in any log', async () => {
    const hookUrl = `${receiver.url}/hooks/${pathToken}?token=${queryToken}`;
    // A webhook channel with the secret and the URL, told of the DAG's failed runs; its first delivery fails.
    const channel = await apiPost('/notifications/channels', { name: 'secret-hook', kind: 'webhook', url: hookUrl, secret: hookSecret });
    expect(channel.status, channel.text).toBe(201);
    const channelId = (JSON.parse(channel.text) as { id: string }).id;
    expect((await apiPost('/dags', { id: dagId, tasks: [{ id: 'boom', type: 'flaky', config: { succeedOnAttempt: 99 }, retries: 0 }] })).status).toBe(201);
    const rule = await apiPost('/notifications/rules', { channelId, event: 'run_failed', dagId });
    expect(rule.status, rule.text).toBe(201);
    let answered = 0;
    receiver.answer = () => (answered++ === 0 ? 500 : 200);
    expect((await apiPost(`/dags/${dagId}/trigger`, {})).status).toBe(201);
    // The worker (registered with its credential) ran the job; the scheduler told the hook twice, the first refused.
    await eventually('the failed run told, after one refused delivery', async () => receiver.received.length >= 2, 45_000, 250);
    expect(receiver.received[1]).toMatchObject({ path: `/hooks/${pathToken}?token=${queryToken}`, event: 'run_failed', signatureOk: true });

    // Channel creations that fail in the store, unexpectedly: over the API with the token, and through the console's procedure with the session.
    const broken = await refuseChannelInserts(process.env.DATABASE_URL!);
    let viaApi: { status: number; text: string };
    let viaConsole: Response;
    try {
      viaApi = await apiPost('/notifications/channels', { name: 'failing-api', kind: 'webhook', url: hookUrl, secret: hookSecret });
      viaConsole = await fetch(`${trpc.url}/api/trpc/notifications.createChannel`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json' },
        body: JSON.stringify({ json: { name: 'failing-console', kind: 'webhook', url: hookUrl, secret: hookSecret } }),
      });
    } finally {
      await broken.undo();
    }
    expect(viaApi.status, viaApi.text).toBe(500);
    const consoleText = await viaConsole.text();
    expect(viaConsole.status, consoleText).toBe(500);
    // Each failure was logged under the id its caller was given, with PostgreSQL's reason.
    const ids = [viaApi.text, consoleText].map((t) => /id ([0-9a-f]{16})/.exec(t)?.[1]);
    const consoleLog = consoleOutput.join('');
    for (const id of ids) {
      expect(id).toBeDefined();
      expect(consoleLog).toContain(id!);
    }
    expect(consoleLog).toContain('the channel table is failing');
    // The scheduler and the worker logged the flow they ran (the job the worker failed, the run that ended so).
    const logs = [...cluster.procs.values()].map((p) => ({ name: p.name, text: p.logs.map((l) => JSON.stringify(l)).join('\n') }));
    expect(logs.map((l) => l.name).sort()).toEqual(['scheduler-1', 'worker-1']);
    expect(logs.find((l) => l.name === 'scheduler-1')!.text).toMatch(/run:finished.*"state":"failed"/);

    const secrets: Record<string, string> = {
      'worker credential': worker.secret,
      'API token': token,
      'API token body': token.slice(4),
      'session cookie': cookie.replace(/^[^=]+=/, '').split(';')[0]!,
      'webhook secret': hookSecret.slice(6),
      'URL path token': pathToken,
      'URL query token': queryToken,
    };
    // `worker-token create` prints the credential on stdout once, by design; what the CLI logs is its stderr.
    const outputs = [...logs, { name: 'console', text: consoleLog }, ...cliRuns.map((r, i) => ({ name: `cli-${i}`, text: r.stderr }))];
    for (const { name, text } of outputs) {
      if (!name.startsWith('cli-')) expect(text.length, `${name} logged something`).toBeGreaterThan(0);
      for (const [what, secret] of Object.entries(secrets)) expect(text.includes(secret), `${name}'s log carries the ${what}`).toBe(false);
      expect(text, `${name}'s log quotes a statement`).not.toMatch(/insert into "?notification_channels/i);
    }
    // Nothing was stored by the refused creations.
    expect((await api.store.listNotificationChannels()).map((c) => c.name)).toEqual(['secret-hook']);
  }, 120_000);
});
