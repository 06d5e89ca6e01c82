import { StoreUnavailableError } from '@fenceline/core';

/**
 * postgres.js's and Node's codes for a connection that could not be made or was lost: the
 * statement's outcome is unknown and the server may be back in a moment.
 */
const LOST_CONNECTION_CODES = new Set([
  'CONNECTION_CLOSED',
  'CONNECTION_DESTROYED',
  'CONNECTION_ENDED',
  'CONNECT_TIMEOUT',
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs that mean the server, not the statement, is the trouble: the
 * server is shutting down or starting (57P01-57P03), has no connection to spare (53300),
 * cancelled the statement on a timeout (57014), or is a standby that refuses writes
 * (25006: a session that reached a node just demoted, or one not yet promoted, during a
 * store failover; nothing was written and the primary will answer in a moment). Class 08,
 * connection exceptions, is matched by its prefix.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '53300', '57014', '25006']);

/**
 * A standby's refusal: a write on a node in recovery (25006), or a function only a primary
 * runs, such as the WAL position the lineage check reads (55000, "recovery is in
 * progress"). The connection works but reached the wrong node (one just demoted, or one
 * opened while the formation changed its primary); it stays there until it is replaced.
 */
export function isStandbyAnswer(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = codeOf(e);
    if (code === '25006' || (code === '55000' && /recovery is in progress/i.test(e.message))) return true;
  }
  return false;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Whether an error from the driver (or one it caused, as drizzle wraps them) says the server is out of reach. */
export function isLostConnection(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = codeOf(e);
    if (code && (LOST_CONNECTION_CODES.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  }
  return isStandbyAnswer(err);
}

/** The error a store method rejects with: a lost connection as core's StoreUnavailableError, anything else as it was. */
export function storeErrorOf(err: unknown): unknown {
  if (err instanceof StoreUnavailableError || !isLostConnection(err)) return err;
  const code = codeOf(err) ?? codeOf((err as Error).cause);
  return new StoreUnavailableError(`the database is unavailable${code ? ` (${code})` : ''}`, { cause: err });
}
