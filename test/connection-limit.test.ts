import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase, dropDatabase, openStore } from '@fenceline/db';
import { REPO_ROOT } from '../tools/start/cluster';
import { ADMIN_URL, eventually } from './support/cluster-fixture';
import { freePortBase } from './support/launcher';

/** The node's descriptors: the default connection limit is this less a reserve of 100. */
const FD_LIMIT = 256;
const MAX_CONNECTIONS = FD_LIMIT - 100;
/** Worker identities that each try to hold one connection: more than the node allows. */
const IDENTITIES = MAX_CONNECTIONS + 60;
const TOKEN = randomBytes(18).toString('base64url');
/** Long enough for the checks made while every poll is held, short enough for the test. */
const POLL_WAIT_MS = 20_000;

interface Answer {
  status: number | string;
  retryAfter?: string;
  body?: string;
}

/** One POST over `agent`; an answer is its status, or the error code when none came. */
function post(port: number, agent: Agent | false, path: string, input: unknown): Promise<Answer> {
  const body = JSON.stringify(input);
  return new Promise((resolve) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method: 'POST',
        agent,
        timeout: POLL_WAIT_MS + 20_000,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${TOKEN}` },
      },
      (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: text }));
      },
    );
    req.on('timeout', () => req.destroy(Object.assign(new Error('timeout'), { code: 'TIMEOUT' })));
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? err.message }));
    req.end(body);
  });
}

function get(port: number, path: string): Promise<Answer> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false, headers: { authorization: `Bearer ${TOKEN}` } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, retryAfter: res.headers['retry-after'], body: text }));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ status: err.code ?? err.message }));
    req.end();
  });
}

/**
 * Every worker long-polls every node, so a node's connections grow with the fleet. A real
 * scheduler process started with a low descriptor limit is driven past it: it must refuse
 * the excess with 503 and Retry-After, say so in one log line rather than one per
 * connection, keep serving the connections it holds, and stay up.
 */
describe('cluster: a scheduler at its connection limit', () => {
  let databaseUrl = '';
  const dbName = `fenceline_it_${randomBytes(4).toString('hex')}`;
  let node: ChildProcess;
  let port = 0;
  const lines: Record<string, unknown>[] = [];
  let exitCode: number | null | undefined;

  beforeAll(async () => {
    databaseUrl = await createDatabase(ADMIN_URL, dbName);
    const store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 1 });
    await store.initCluster(2);
    await store.close();
    port = await freePortBase();
    // The shell lowers the limit (soft and hard) and becomes the node.
    node = spawn('sh', ['-c', `ulimit -n ${FD_LIMIT} && exec "$0" --import tsx "$1"`, process.execPath, join(REPO_ROOT, 'apps/scheduler/src/main.ts')], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        DATABASE_URL: databaseUrl,
        FENCELINE_WORKER_AUTH: 'dev',
        FENCELINE_WORKER_TOKEN: TOKEN,
        FENCELINE_SCHEDULER_PORT: String(port),
        FENCELINE_NODE_ID: 'scheduler-1',
        FENCELINE_SHARDS: '2',
        FENCELINE_LOG_LEVEL: 'info',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let pending = '';
    node.stdout!.on('data', (d: Buffer) => {
      pending += d.toString();
      const parts = pending.split('\n');
      pending = parts.pop()!;
      for (const p of parts) {
        try {
          lines.push(JSON.parse(p) as Record<string, unknown>);
        } catch {
          lines.push({ msg: p });
        }
      }
    });
    node.stderr!.on('data', (d: Buffer) => lines.push({ msg: d.toString(), stderr: true }));
    node.once('exit', (code) => (exitCode = code));
    // A busy machine takes tens of seconds to load the sources through tsx.
    await eventually(
      'the node to start',
      async () => {
        if (exitCode !== undefined) throw new Error(`the node exited (${String(exitCode)}): ${JSON.stringify(lines.slice(-3))}`);
        return lines.some((l) => l.msg === 'scheduler started');
      },
      150_000,
    );
  }, 180_000);

  afterAll(async () => {
    if (node && exitCode === undefined) {
      node.kill('SIGKILL');
      await new Promise((resolve) => node.once('exit', resolve));
    }
    if (databaseUrl) await dropDatabase(ADMIN_URL, dbName).catch(() => undefined);
  });

  it('refuses the excess with 503 and Retry-After, logs it once, keeps serving the rest and stays up', async () => {
    const started = lines.find((l) => l.msg === 'scheduler started')!;
    expect(started).toMatchObject({ fdLimit: FD_LIMIT, maxConnections: MAX_CONNECTIONS });

    // Each identity on a connection of its own, as worker processes are: it registers, and
    // an identity that got in holds a long poll on the same connection at once.
    const session = randomBytes(32).toString('base64url');
    const agents = Array.from({ length: IDENTITIES }, () => new Agent({ keepAlive: true, maxSockets: 1 }));
    const polls: Promise<Answer>[] = [];
    const registered = await Promise.all(
      agents.map(async (agent, i) => {
        const r = await post(port, agent, '/trpc/register', { workerId: `w-${i}`, slots: 1, session });
        if (r.status === 200) polls.push(post(port, agent, '/trpc/poll', { workerId: `w-${i}`, session, slots: 1, free: 1, waitMs: POLL_WAIT_MS }));
        return r;
      }),
    );
    const refused = registered.filter((r) => r.status === 503);
    // Nothing else holds a connection, so exactly the limit gets in; the rest are refused
    // (with a 503, or cut at once beyond the few refusals the node lets linger).
    expect(polls.length).toBe(MAX_CONNECTIONS);
    expect(refused.length).toBeGreaterThan(0);
    expect(registered.every((r) => r.status === 200 || r.status === 503 || r.status === 'ECONNRESET')).toBe(true);
    for (const r of refused) {
      expect(r.retryAfter).toBe('5');
      expect(JSON.parse(r.body!)).toMatchObject({ error: { data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503 } } });
    }

    // Every poll is held (the node counts its waiting workers), so a newcomer is refused.
    let late: Answer = { status: 0 };
    await eventually(
      'a new connection to be refused while every poll is held',
      async () => {
        late = await get(port, '/health');
        return late.status === 503 ? late : null;
      },
      POLL_WAIT_MS - 10_000,
    );
    expect(late.retryAfter).toBe('5');

    // The held polls are answered (no job: an empty list once their wait is over).
    const answered = await Promise.all(polls);
    expect(answered.map((a) => a.status)).toEqual(polls.map(() => 200));
    expect(answered.every((a) => JSON.parse(a.body!).result.data.length === 0)).toBe(true);
    for (const agent of agents) agent.destroy();

    // Connections are taken again once the polls are gone, and the node counted what it refused.
    const metrics = await eventually(
      'the node to accept connections again',
      async () => {
        const m = await get(port, '/metrics');
        return m.status === 200 ? m.body! : null;
      },
      20_000,
    );
    const refusedTotal = Number(/^fenceline_http_connections_refused_total (\d+)/m.exec(metrics)?.[1]);
    expect(refusedTotal).toBeGreaterThanOrEqual(IDENTITIES - MAX_CONNECTIONS + 1);

    // One line said so, not one per connection (a second only if the run took over 30 s).
    const said = lines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('connection limit reached'));
    expect(said.length).toBeGreaterThanOrEqual(1);
    expect(said.length).toBeLessThanOrEqual(2);
    expect(said[0]).toMatchObject({ level: 'warn', maxConnections: MAX_CONNECTIONS, fdLimit: FD_LIMIT });
    expect(lines.filter((l) => l.stderr)).toEqual([]);
    expect(exitCode).toBeUndefined();
  }, 60_000);
});
