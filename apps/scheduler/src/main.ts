import { createHmac } from 'node:crypto';
import { type Clock, logSafeError, logSafeMessage, type Timers } from '@fenceline/core';
import { type NotifyIo, SchedulerNode } from '@fenceline/core/engine';
import { openStore, resolveDatabaseUrl } from '@fenceline/db';
import { readSchedulerConfig } from './config';
import { WorkerAuth } from './api/worker-auth';
import { createSchedulerServer } from './http';
import { setInternalErrorLog } from './api/opaque-errors';
import { errorFields, jobLogIds, jsonLogger } from '@fenceline/telemetry/log';
import { tracedStore, tracingFromEnv } from '@fenceline/telemetry';
import { startRuntimeMetrics } from './runtime-metrics';
import { fdLimit, limitConnections, maxConnectionsFor } from './connection-limit';

/** The machine's clock and timers, bound here so the scheduling logic never reads them itself. */
export const systemClock: Clock = { nowMs: () => Date.now() };
export const systemTimers: Timers = {
  after(delayMs, fn) {
    const handle = setTimeout(fn, delayMs);
    return () => clearTimeout(handle);
  },
};

/** How long a receiver may take to answer a notification; the store's claim (30 s) outlasts it. */
const NOTIFY_TIMEOUT_MS = 10_000;

/**
 * Notifications over HTTP. Redirects are not followed, so a receiver cannot send a signed
 * body on to another address; an answer's body is not read beyond its status.
 */
export const httpNotify: NotifyIo = {
  async deliver(request) {
    const response = await fetch(request.url, {
      method: 'POST',
      headers: request.headers,
      body: request.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(NOTIFY_TIMEOUT_MS),
    });
    await response.body?.cancel().catch(() => undefined);
    return { status: response.status };
  },
  sign: (key, content) => createHmac('sha256', key).update(content).digest('base64'),
};

async function main(): Promise<void> {
  const config = readSchedulerConfig();
  const log = jsonLogger({ service: 'scheduler', nodeId: config.nodeId });
  setInternalErrorLog(log.child({ component: 'api' }));
  const store = await openStore({ databaseUrl: await resolveDatabaseUrl(), applicationName: config.nodeId, max: 10 });
  // Off unless an OTLP endpoint is configured (docs/traces.md): then the node's spans
  // and those of its hot-path store writes are exported.
  const telemetry = await tracingFromEnv('fenceline-scheduler');
  const node = new SchedulerNode({
    nodeId: config.nodeId,
    store: tracedStore(store, telemetry.tracing),
    clock: systemClock,
    timers: systemTimers,
    config: config.node,
    tracing: telemetry.tracing,
    onEvent: (e, span) => {
      const quiet = e.type === 'lease:renewed' || e.type === 'lease:granted' || e.type === 'job:succeeded';
      const level = quiet ? 'debug' : 'info';
      // At the default level a job's grant and success are debug lines nobody writes, so
      // their fields (two objects and a spread per event) are built only when one would be.
      if (log.enabled(level)) log.log(level, e.type, { event: e, ...jobLogIds(e, span) });
    },
    onError: (where, err) => log.log('error', `loop ${where} failed`, errorFields(err)),
    onLog: (level, msg, fields) => log.log(level, msg, fields),
    notify: httpNotify,
  });
  // Contend for shards before answering /health, so a launcher that waits for health
  // before starting the next node gets one leader and standbys rather than a split.
  await node.start();
  const auth = new WorkerAuth({ mode: config.workerAuth, devToken: config.workerToken, store, nowMs: systemClock.nowMs });
  await auth.start();
  if (config.workerAuth === 'dev') {
    log.log('warn', 'development mode: the fleet-wide FENCELINE_WORKER_TOKEN may act as any worker (FENCELINE_WORKER_AUTH=dev)', {});
  } else if (process.env.FENCELINE_WORKER_TOKEN) {
    log.log('warn', 'FENCELINE_WORKER_TOKEN is ignored: only issued worker credentials are accepted (FENCELINE_WORKER_AUTH=dev accepts it)', {});
  }
  const runtime = startRuntimeMetrics();
  let connections: { open(): number; refused(): number } | null = null;
  const server = createSchedulerServer(node, auth, () => ({
    ...runtime.snapshot(),
    http_connections_open: connections?.open() ?? 0,
    http_connections_refused_total: connections?.refused() ?? 0,
  }));
  // Every worker holds a long poll on every node, so a node's connections grow with the
  // fleet; past its descriptors it refuses the excess rather than failing (connection-limit.ts).
  const fds = fdLimit();
  const maxConnections = maxConnectionsFor(fds, config.maxConnections);
  connections = limitConnections(server, { maxConnections, fdLimit: fds, log: (level, msg, fields) => log.log(level, msg, fields), nowMs: systemClock.nowMs });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  log.log('info', 'scheduler started', {
    url: `http://${config.host}:${port}`,
    leads: node.ledShards(),
    shardCount: node.config.shardCount,
    maxConnections: Number.isFinite(maxConnections) ? maxConnections : null,
    fdLimit: fds,
  });

  // postgres.js 3.4.9 can throw outside any call: a transaction whose connection closed
  // (the primary lost mid-transaction) still sends its ROLLBACK, and the write, deferred to
  // the next turn, finds the socket gone. Uncaught, that TypeError ended the process; both
  // schedulers of a failover drill died of it at once. It is the driver's own deferred
  // write, so it is caught here, narrowly: the pool that holds the broken connection is
  // replaced, and any other uncaught error still ends the process as before.
  process.on('uncaughtException', (err: unknown) => {
    if (!isDriverWriteOnClosedSocket(err)) {
      // Its last words go through logSafeError too: an uncaught store error quotes its statement's parameters.
      const safe = logSafeError(err);
      process.stderr.write(`${safe.errorName ? `${safe.errorName}: ` : ''}${safe.error}${safe.stack ? `\n${safe.stack}` : ''}\n`);
      process.exit(1);
    }
    log.log('error', 'the database driver wrote to a closed connection; replacing the store connections', { error: err.message });
    node.metrics.inc('store_reconnects_total');
    void store.reconnect().catch(() => undefined);
  });
  // The driver also rejects promises no call waits on when it destroys a pool's
  // connections (its end() after a reconnect, a primary lost under a query of its own):
  // uncaught, that rejection ended the process, and both schedulers of a failover drill
  // died of it in one round. Nothing waited on it, so nothing is lost by letting it go; a
  // burst of them (one per connection) replaces the pool once. Any other unhandled
  // rejection is thrown on, to the handler above, which ends the process as before.
  let droppedAtMs = 0;
  process.on('unhandledRejection', (reason: unknown) => {
    if (!isDriverConnectionLoss(reason)) throw reason;
    const now = Date.now();
    if (now - droppedAtMs < 3_000) return;
    droppedAtMs = now;
    log.log('warn', 'the database driver lost connections no call was waiting on; replacing the store connections', { error: reason.message, code: reason.code });
    node.metrics.inc('store_reconnects_total');
    void store.reconnect().catch(() => undefined);
  });

  let stopping = false;
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    stopping = true;
    log.log('info', 'shutting down: releasing shard leases', { signal });
    await node.stop().catch((err) => log.log('error', 'stop failed', errorFields(err)));
    server.closeAllConnections?.();
    server.close();
    runtime.stop();
    await auth.stop().catch(() => undefined);
    await store.close().catch(() => undefined);
    await telemetry.shutdown().catch((err) => log.log('warn', 'could not export the last spans', errorFields(err)));
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

/**
 * The driver's error for a connection it closed or destroyed (postgres.js's codes for
 * them), or the server's word that it is ending the connection (SQLSTATE class 57P: an
 * administrator's or a crash's shutdown, or a server not yet accepting connections). The
 * driver rejects with the latter too when a server shuts down under a connection that was
 * checking the server's role, a promise no call holds: a scheduler died of one, unhandled,
 * in a postmaster kill of the repeated failover drill.
 */
function isDriverConnectionLoss(err: unknown): err is Error & { code: string } {
  const code = (err as { code?: unknown } | null)?.code;
  if (!(err instanceof Error) || typeof code !== 'string') return false;
  return code === 'CONNECTION_DESTROYED' || code === 'CONNECTION_CLOSED' || code === 'CONNECTION_ENDED' || /^57P0[1-3]$/.test(code);
}

/** The driver's deferred write on a connection whose socket is gone (see the handler in main). */
function isDriverWriteOnClosedSocket(err: unknown): err is TypeError {
  return err instanceof TypeError && /reading 'write'/.test(err.message) && /postgres[\\/]src[\\/]connection\.js/.test(err.stack ?? '') && /nextWrite/.test(err.stack ?? '');
}

main().catch((err) => {
  process.stderr.write(`scheduler failed to start: ${logSafeMessage(err)}\n`);
  process.exit(1);
});
