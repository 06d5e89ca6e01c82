import { randomBytes } from 'node:crypto';
import { Agent, request } from 'node:http';
import { retryDelayAfter } from '@fenceline/core/worker';

/**
 * A multiplexed worker-identity load generator: one process speaks the worker protocol
 * (plain HTTP to the tRPC endpoints, no client library, so the generator itself stays
 * cheap) for thousands of worker identities at once. The bench forks a few of these and
 * drives them over IPC:
 *
 *   {cmd: 'init', ids, urls, token}            the identities it speaks for
 *   {cmd: 'lease', node, timeoutMs}            every identity long-polls `node` with one
 *                                              free slot until it holds one lease
 *   {cmd: 'renew', mode: 'burst'|'spread', windowMs}
 *                                              every identity renews its lease once, all at
 *                                              once or evenly over the window, batched per
 *                                              node (renewMany); replies with each
 *                                              renewal's latency
 *   {cmd: 'idle', waitMs}                      every identity registers with every node and
 *                                              keeps one long poll open on it (re-polling
 *                                              when answered), until
 *   {cmd: 'fleet', waitMs}                     every identity registers with and long-polls
 *                                              every node as apps/worker does (on a failure:
 *                                              the worker's backoff, then register again);
 *                                              replies at once, the loops run until stop
 *   {cmd: 'fleetStats'}                        failures per node by HTTP status or error code
 *   {cmd: 'stop'}
 */

interface Lease {
  jobId: string;
  fence: number;
  node: number;
}

let ids: string[] = [];
let urls: string[] = [];
let token = '';
const leases = new Map<string, Lease>();
/** Each identity's session secret, as each worker process has its own; made on first use. */
const sessions = new Map<string, string>();
const sessionOf = (id: string): string => {
  let session = sessions.get(id);
  if (!session) sessions.set(id, (session = randomBytes(32).toString('base64url')));
  return session;
};
let idling = false;
const pollAgent = new Agent({ keepAlive: true, maxSockets: Infinity });
const callAgent = new Agent({ keepAlive: true, maxSockets: 256 });

function call<T>(node: number, procedure: string, input: unknown, agent: Agent, timeoutMs = 120_000): Promise<T> {
  const url = new URL(`${urls[node]}/trpc/${procedure}`);
  const body = JSON.stringify(input);
  return new Promise<T>((resolve, reject) => {
    const req = request(
      {
        hostname: url.hostname,
        port: url.port,
        path: url.pathname,
        method: 'POST',
        agent,
        timeout: timeoutMs,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), authorization: `Bearer ${token}` },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          try {
            const parsed = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { result?: { data: T }; error?: { message: string } };
            if (parsed.result) resolve(parsed.result.data);
            else {
              // A node's Retry-After goes on the error, as the worker's transport puts it.
              const after = Number(res.headers['retry-after']);
              reject(
                Object.assign(new Error(parsed.error?.message ?? `status ${res.statusCode}`), {
                  code: String(res.statusCode),
                  ...(after > 0 ? { retryAfterMs: after * 1000 } : {}),
                }),
              );
            }
          } catch (err) {
            reject(err);
          }
        });
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

async function leaseAll(node: number, timeoutMs: number): Promise<{ leased: number; failed: number }> {
  const deadline = Date.now() + timeoutMs;
  let failed = 0;
  await Promise.all(
    ids.map(async (id) => {
      // A lease is granted to the identity's session, so it registers first, as a worker does.
      let registered = false;
      while (!leases.has(id) && Date.now() < deadline) {
        try {
          if (!registered) {
            await call(node, 'register', { workerId: id, slots: 1, session: sessionOf(id) }, callAgent);
            registered = true;
          }
          const jobs = await call<{ jobId: string; fence: number }[]>(
            node,
            'poll',
            { workerId: id, session: sessionOf(id), slots: 1, free: 1, waitMs: Math.min(20_000, Math.max(1, deadline - Date.now())) },
            pollAgent,
          );
          const [first, ...extra] = jobs;
          if (first) leases.set(id, { jobId: first.jobId, fence: first.fence, node });
          // One slot: anything beyond it goes straight back, as a real worker would do.
          for (const j of extra) await call(node, 'release', { workerId: id, session: sessionOf(id), jobId: j.jobId, fence: j.fence }, callAgent).catch(() => undefined);
        } catch {
          failed++;
          await new Promise((r) => setTimeout(r, 200));
        }
      }
    }),
  );
  return { leased: leases.size, failed };
}

/**
 * Every identity renews its lease once. A process hosting many identities renews them the
 * way a multi-identity agent would: the identities due in the same 10 ms go to each node
 * in one renewMany request (at most RENEW_CHUNK leases each), and every lease is still
 * checked against its own holder. Burst: all at once; spread: evenly over `windowMs`.
 */
const RENEW_CHUNK = 1000;
const RENEW_SLOT_MS = 10;

async function renew(
  mode: 'burst' | 'spread',
  windowMs: number,
): Promise<{ latenciesMs: number[]; ok: number; refused: number; errors: number; firstSentMs: number; lastDoneMs: number; requests: number }> {
  const latencies: number[] = [];
  let ok = 0;
  let refused = 0;
  let errors = 0;
  let requests = 0;
  const held = [...leases.entries()];
  const start = Date.now();
  let lastDone = start;
  // Identities grouped by the 10 ms slot they are due in, then by node.
  const slots = new Map<number, Map<number, [string, Lease][]>>();
  held.forEach((entry, i) => {
    const slot = mode === 'spread' ? Math.floor(((i / held.length) * windowMs) / RENEW_SLOT_MS) : 0;
    const byNode = slots.get(slot) ?? new Map<number, [string, Lease][]>();
    const list = byNode.get(entry[1].node) ?? [];
    list.push(entry);
    byNode.set(entry[1].node, list);
    slots.set(slot, byNode);
  });
  await Promise.all(
    [...slots].map(async ([slot, byNode]) => {
      if (slot > 0) await new Promise((r) => setTimeout(r, slot * RENEW_SLOT_MS));
      const sends: Promise<void>[] = [];
      for (const [node, entries] of byNode) {
        for (let k = 0; k < entries.length; k += RENEW_CHUNK) {
          const chunk = entries.slice(k, k + RENEW_CHUNK);
          requests++;
          sends.push(
            (async () => {
              const t0 = performance.now();
              try {
                const out = await call<{ ok: boolean }[]>(
                  node,
                  'renewMany',
                  { renewals: chunk.map(([id, lease]) => ({ workerId: id, session: sessionOf(id), jobId: lease.jobId, fence: lease.fence })) },
                  callAgent,
                );
                const ms = performance.now() - t0;
                for (const o of out) {
                  latencies.push(ms);
                  if (o.ok) ok++;
                  else refused++;
                }
              } catch {
                errors += chunk.length;
              }
              lastDone = Math.max(lastDone, Date.now());
            })(),
          );
        }
      }
      await Promise.all(sends);
    }),
  );
  return { latenciesMs: latencies, ok, refused, errors, firstSentMs: start, lastDoneMs: lastDone, requests };
}

/**
 * Registers every identity with every node, as apps/worker does (the worker rows are
 * what the nodes' heartbeats keep fresh, and the idle case counts those writes), then
 * starts the long polls. Resolves once every identity is registered, so the bench's
 * measuring window holds no registrations.
 */
async function idle(waitMs: number): Promise<{ registered: number }> {
  idling = true;
  const pairs = ids.flatMap((id) => urls.map((_, node) => ({ id, node })));
  const registered = await Promise.all(
    pairs.map(({ id, node }) =>
      call(node, 'register', { workerId: id, slots: 1, session: sessionOf(id) }, callAgent).then(
        () => 1,
        () => 0,
      ),
    ),
  );
  for (const { id, node } of pairs) {
    void (async () => {
      while (idling) {
        try {
          const jobs = await call<{ jobId: string; fence: number }[]>(
            node,
            'poll',
            { workerId: id, session: sessionOf(id), slots: 1, free: 1, waitMs },
            pollAgent,
            waitMs + 30_000,
          );
          for (const j of jobs) await call(node, 'release', { workerId: id, session: sessionOf(id), jobId: j.jobId, fence: j.fence }, callAgent).catch(() => undefined);
        } catch {
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
  }
  return { registered: registered.reduce((a: number, b: number) => a + b, 0) };
}

/** Failures per node, by HTTP status or socket error code, since the fleet loops began. */
const fleetFailures: Record<string, number>[] = [];

/**
 * The worker's polling as apps/worker does it (packages/core/src/worker/worker-core.ts),
 * for every identity on every node: register, then one long poll at a time; after a
 * failed poll, wait retryDelayAfter (the backoff, or the node's Retry-After) and register again (a restarted node has
 * forgotten the worker). Jobs are never expected; any that comes is handed back.
 */
function fleet(waitMs: number): void {
  idling = true;
  urls.forEach((_, node) => (fleetFailures[node] = {}));
  const failed = (node: number, err: unknown): void => {
    const code = String((err as { code?: string }).code ?? (err as Error).message);
    fleetFailures[node]![code] = (fleetFailures[node]![code] ?? 0) + 1;
  };
  const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
  for (const id of ids) {
    urls.forEach((_, node) => {
      void (async () => {
        let failures = 0;
        let registered = false;
        while (idling) {
          if (!registered) {
            try {
              // On the poll's agent, as a worker process registers and polls over its own connections.
              await call(node, 'register', { workerId: id, slots: 1, session: sessionOf(id) }, pollAgent, 30_000);
              registered = true;
            } catch (err) {
              failed(node, err);
              await sleep(retryDelayAfter(err, failures++));
              continue;
            }
          }
          try {
            const jobs = await call<{ jobId: string; fence: number }[]>(
              node,
              'poll',
              { workerId: id, session: sessionOf(id), slots: 1, free: 1, waitMs },
              pollAgent,
              waitMs + 30_000,
            );
            failures = 0;
            for (const j of jobs) await call(node, 'release', { workerId: id, session: sessionOf(id), jobId: j.jobId, fence: j.fence }, callAgent).catch(() => undefined);
          } catch (err) {
            failed(node, err);
            await sleep(retryDelayAfter(err, ++failures));
            registered = false;
          }
        }
      })();
    });
  }
}

process.on('message', (msg: { cmd: string; id: number } & Record<string, unknown>) => {
  const reply = (data: unknown): void => {
    process.send?.({ id: msg.id, data });
  };
  const fail = (err: unknown): void => {
    process.send?.({ id: msg.id, error: err instanceof Error ? err.message : String(err) });
  };
  switch (msg.cmd) {
    case 'init':
      ids = msg.ids as string[];
      urls = msg.urls as string[];
      token = msg.token as string;
      reply({ ok: true });
      break;
    case 'lease':
      leaseAll(msg.node as number, msg.timeoutMs as number).then(reply, fail);
      break;
    case 'renew':
      renew(msg.mode as 'burst' | 'spread', (msg.windowMs as number) ?? 0).then(reply, fail);
      break;
    case 'idle':
      idle(msg.waitMs as number).then(reply, fail);
      break;
    case 'fleet':
      fleet(msg.waitMs as number);
      reply({ ok: true });
      break;
    case 'fleetStats':
      reply({ failures: fleetFailures, rssMb: process.memoryUsage().rss / 1048576 });
      break;
    case 'stop':
      idling = false;
      pollAgent.destroy();
      callAgent.destroy();
      reply({ ok: true });
      setTimeout(() => process.exit(0), 50);
      break;
    default:
      fail(new Error(`unknown command ${msg.cmd}`));
  }
});
