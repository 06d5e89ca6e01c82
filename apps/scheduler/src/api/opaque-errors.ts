import { randomBytes } from 'node:crypto';
import type { TRPCError } from '@trpc/server';
import { errorFields, jsonLogger, type Logger } from '../log';

/**
 * An error no procedure meant to send (a failed statement, a bug) is answered with an
 * opaque id and nothing else: its message can hold a statement and its parameters, which
 * may be another caller's data, and its stack says how the server is built. The detail is
 * logged under the same id, so an operator can find it from what the caller saw.
 */

let log: Logger = jsonLogger({ service: 'scheduler', component: 'api' });

/** Where the details of unexpected errors are logged (the process's logger, or a test's). */
export function setInternalErrorLog(logger: Logger): void {
  log = logger;
}

// One id per error, however many times its shape is built.
const ids = new WeakMap<object, string>();

/** The message an unexpected error is answered with; its detail is logged once, under the id. */
export function internalErrorMessage(error: TRPCError, where: { path?: string; nodeId?: string }): string {
  let id = ids.get(error);
  if (id === undefined) {
    id = randomBytes(8).toString('hex');
    ids.set(error, id);
    log.log('error', 'request failed with an unexpected error', { errorId: id, path: where.path, nodeId: where.nodeId, ...errorFields(error.cause ?? error) });
  }
  return `internal error; id ${id}`;
}
