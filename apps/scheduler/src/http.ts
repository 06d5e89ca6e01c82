import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createHTTPHandler } from '@trpc/server/adapters/standalone';
import type { SchedulerNode } from '@fenceline/core/engine';
import { bearer } from './api/auth';
import { authUnavailable, type WorkerAuth } from './api/worker-auth';
import { workerRouter } from './api/worker-router';
import { HOT_PROCEDURES, serveHot } from './api/lean-http';

/** Worker request bodies are small; results are bounded by LIMITS.maxResultBytes plus envelope. */
const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The scheduler's HTTP surface: the worker protocol under /trpc, /metrics in the
 * Prometheus text format (it needs a worker credential too, since it names workers and
 * DAGs; `runtime` adds the process's own counters, see runtime-metrics.ts), and /health,
 * the one unauthenticated endpoint, for load balancers.
 */
export function createSchedulerServer(node: SchedulerNode, auth: WorkerAuth, runtime: () => Record<string, number> = () => ({})): Server {
  const trpc = createHTTPHandler({
    router: workerRouter,
    basePath: '/trpc/',
    maxBodySize: MAX_BODY_BYTES,
    createContext: async ({ req, res }) => ({ node, req, res, caller: await auth.authenticate(bearer(req.headers.authorization)).catch(() => Promise.reject(authUnavailable())) }),
  });
  return createServer((req, res) => void serve(req, res));

  async function serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = req.url ?? '/';
    if (url === '/health' || url === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ ok: true, nodeId: node.nodeId, leads: node.ledShards() }));
      return;
    }
    if (url === '/metrics') {
      const caller = await auth.authenticate(bearer(req.headers.authorization)).catch(() => undefined);
      if (caller === undefined) {
        res.writeHead(503, { 'content-type': 'text/plain' });
        res.end('worker credentials cannot be checked right now; try again\n');
        return;
      }
      if (!caller) {
        res.writeHead(401, { 'content-type': 'text/plain' });
        res.end('a valid token is required\n');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
      res.end(
        node.metrics.render({
          ...runtime(),
          shards_led: node.ledShards().length,
          workers_live: node.pool.live().length,
          pool_slots: node.pool.poolSlots(),
          workers_waiting: node.pool.waiting().length,
        }),
      );
      return;
    }
    if (url.startsWith('/trpc/')) {
      // Single (unbatched) calls of the hot worker procedures skip the fetch adapter; the
      // rest, batched calls included, take the standard path.
      const path = url.slice('/trpc/'.length);
      if (req.method === 'POST' && !jsonBody(req)) {
        // A worker sends JSON only; a body of any other type is refused unread, on both paths.
        req.resume();
        res.writeHead(415, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            error: {
              message: 'UNSUPPORTED_MEDIA_TYPE: send the body as JSON, with Content-Type: application/json',
              code: -32600,
              data: { code: 'UNSUPPORTED_MEDIA_TYPE', httpStatus: 415 },
            },
          }),
        );
        return;
      }
      if (req.method === 'POST' && HOT_PROCEDURES.has(path)) serveHot(node, auth, MAX_BODY_BYTES, path, req, res);
      else trpc(req, res);
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'not found' }));
  }
}

/** Whether a POST's body is declared JSON, or there is no body at all to declare. */
function jsonBody(req: IncomingMessage): boolean {
  const type = req.headers['content-type'];
  if (type === undefined) return req.headers['transfer-encoding'] === undefined && (req.headers['content-length'] ?? '0') === '0';
  return /^application\/json\s*(;.*)?$/i.test(type.trim());
}
