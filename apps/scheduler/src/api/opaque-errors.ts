import type { TRPCError } from '@trpc/server';
import { jsonLogger, opaqueErrorId, type Logger } from '@fenceline/telemetry/log';

/**
 * An error no procedure meant to send (a failed statement, a bug) is answered with an
 * opaque id and nothing else; its detail is logged under the same id (opaqueErrorId).
 */

let log: Logger = jsonLogger({ service: 'scheduler', component: 'api' });

/** Where the details of unexpected errors are logged (the process's logger, or a test's). */
export function setInternalErrorLog(logger: Logger): void {
  log = logger;
}

/** The message an unexpected error is answered with; its detail is logged once, under the id. */
export function internalErrorMessage(error: TRPCError, where: { path?: string; nodeId?: string }): string {
  const id = opaqueErrorId(error, log, 'request failed with an unexpected error', { path: where.path, nodeId: where.nodeId }, error.cause ?? error);
  return `internal error; id ${id}`;
}
