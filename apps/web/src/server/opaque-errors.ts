import type { TRPCError } from '@trpc/server';
import { isFencelineError } from '@fenceline/core';
import { jsonLogger, logLevelFromEnv, opaqueErrorId } from '@fenceline/telemetry/log';

/**
 * What the console may say about an error. A typed refusal, an input that failed its
 * schema and a refusal the console makes itself keep their words. Anything else (a failed
 * statement, a bug, a request the server could not even read) is answered with an opaque
 * id only (opaqueErrorId): its message can hold a statement and its parameters, and its
 * stack says how the server is built. The detail is logged under the id, once per error,
 * so an operator can find it from what the caller saw.
 */

// The console's lines go to stderr, where Next writes its own errors.
const log = jsonLogger({ service: 'console' }, logLevelFromEnv(), (line) => console.error(line));

/** Whether the error's message is one of the runtime's or a library's, not the console's own words. */
function isForeign(error: TRPCError): boolean {
  const cause = error.cause;
  if (cause === undefined || isFencelineError(cause)) return false;
  if (Array.isArray((cause as { issues?: unknown }).issues)) return false;
  return error.code === 'INTERNAL_SERVER_ERROR' || error.message === cause.message;
}

/** The message the caller gets, or null when the error's own message may be shown. */
export function opaqueMessage(error: TRPCError, path: string | undefined): string | null {
  if (!isForeign(error)) return null;
  // The log line never carries the statement's parameters (a channel's URL and secret among them), a credential or a whole URL.
  const id = opaqueErrorId(error, log, 'console request failed', { path, code: error.code }, error.cause ?? error);
  return error.code === 'INTERNAL_SERVER_ERROR' ? `internal error; id ${id}` : `${error.code}: the request could not be read; id ${id}`;
}
