import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { LogLevel } from '@fenceline/telemetry/log';

/** How long a refused client is asked to wait before it tries this node again. */
export const RETRY_AFTER_SECONDS = 5;

/** At most one log line about refused connections (or accept failures) per this many ms. */
export const REFUSAL_LOG_INTERVAL_MS = 30_000;

/** How long a refused connection may stay open for its 503 to be read before it is cut. */
const REFUSED_LINGER_MS = 2_000;

const REFUSAL_BODY = JSON.stringify({
  error: {
    message: `SERVICE_UNAVAILABLE: this scheduler node is at its connection limit; retry after ${RETRY_AFTER_SECONDS} s`,
    code: -32603,
    data: { code: 'SERVICE_UNAVAILABLE', httpStatus: 503 },
  },
});

const REFUSAL = Buffer.from(
  'HTTP/1.1 503 Service Unavailable\r\n' +
    `Retry-After: ${RETRY_AFTER_SECONDS}\r\n` +
    'Content-Type: application/json\r\n' +
    `Content-Length: ${Buffer.byteLength(REFUSAL_BODY)}\r\n` +
    'Connection: close\r\n\r\n' +
    REFUSAL_BODY,
);

/**
 * The soft limit on open file descriptors of this process (Node raises it to the hard
 * limit at start), from /proc; null where it cannot be read or is unlimited.
 */
export function fdLimit(): number | null {
  try {
    const m = /^Max open files\s+(\d+|unlimited)\s/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m && m[1] !== 'unlimited' ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/**
 * The most HTTP connections a node holds at once: FENCELINE_MAX_CONNECTIONS, else the file
 * descriptor limit less a reserve (the store's connections, logs, outgoing notifications,
 * and the refused connections while their 503 goes out), else no limit.
 */
export function maxConnectionsFor(limit: number | null, configured: number | null): number {
  if (configured !== null) return configured;
  if (limit === null) return Infinity;
  return Math.max(1, limit - Math.max(100, Math.floor(limit / 20)));
}

export interface ConnectionLimit {
  /** Connections the HTTP server holds now. */
  open(): number;
  /** Connections refused since the node started. */
  refused(): number;
}

/**
 * Holds the server to `maxConnections` open connections. A connection beyond it is not
 * handed to the HTTP server: it gets a 503 with Retry-After at once and is closed, so a
 * worker backs off and polls the node's peers meanwhile, and the connections the node
 * already holds keep being served. Should accept() fail anyway (the descriptors went to
 * something else), the failure is logged and the node goes on, where an unhandled server
 * error used to end the process. Either condition is logged at most once per
 * REFUSAL_LOG_INTERVAL_MS, with the count since the last line, never once per connection.
 */
export function limitConnections(
  server: Server,
  opts: { maxConnections: number; fdLimit: number | null; log: (level: LogLevel, msg: string, fields: Record<string, unknown>) => void; nowMs: () => number },
): ConnectionLimit {
  let open = 0;
  let refusedTotal = 0;
  let refusedUnlogged = 0;
  let acceptFailuresUnlogged = 0;
  let lastRefusalLog = -Infinity;
  let lastAcceptLog = -Infinity;
  // Refused sockets hold a descriptor until their 503 is out; past this many, the rest are cut at once.
  let lingering = 0;
  const maxLingering = 20;

  const serve = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    if (open >= opts.maxConnections) {
      refuse(socket);
      return;
    }
    open++;
    socket.once('close', () => open--);
    for (const fn of serve) fn.call(server, socket);
  });

  server.on('error', (err: NodeJS.ErrnoException) => {
    // Listen errors are the starter's to handle; after listen, only accept() fails here.
    if (err.syscall !== 'accept') return;
    acceptFailuresUnlogged++;
    const now = opts.nowMs();
    if (now - lastAcceptLog < REFUSAL_LOG_INTERVAL_MS) return;
    lastAcceptLog = now;
    opts.log('error', 'cannot accept connections: out of file descriptors; lower FENCELINE_MAX_CONNECTIONS or raise the limit (ulimit -n)', {
      code: err.code,
      acceptFailures: acceptFailuresUnlogged,
      openConnections: open,
      fdLimit: opts.fdLimit,
    });
    acceptFailuresUnlogged = 0;
  });

  function refuse(socket: Socket): void {
    refusedTotal++;
    refusedUnlogged++;
    const now = opts.nowMs();
    if (now - lastRefusalLog >= REFUSAL_LOG_INTERVAL_MS) {
      lastRefusalLog = now;
      opts.log('warn', `connection limit reached: refusing new connections with 503 (Retry-After ${RETRY_AFTER_SECONDS} s) while ${opts.maxConnections} are open`, {
        maxConnections: opts.maxConnections,
        fdLimit: opts.fdLimit,
        refused: refusedUnlogged,
        refusedTotal,
      });
      refusedUnlogged = 0;
    }
    socket.on('error', () => undefined);
    if (lingering >= maxLingering) {
      socket.destroy();
      return;
    }
    lingering++;
    const timer = setTimeout(() => socket.destroy(), REFUSED_LINGER_MS);
    socket.once('close', () => {
      lingering--;
      clearTimeout(timer);
    });
    // The request is read and dropped, so closing does not reset the connection under the answer.
    socket.resume();
    socket.end(REFUSAL);
  }

  return { open: () => open, refused: () => refusedTotal };
}
