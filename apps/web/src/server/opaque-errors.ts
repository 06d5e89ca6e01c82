import { randomBytes } from 'node:crypto';
import type { TRPCError } from '@trpc/server';
import { isFencelineError, logSafeError } from '@fenceline/core';

/**
 * What the console may say about an error. A typed refusal, an input that failed its
 * schema and a refusal the console makes itself keep their words. Anything else (a failed
 * statement, a bug, a request the server could not even read) is answered with an opaque
 * id only: its message can hold a statement and its parameters, and its stack says how the
 * server is built. The detail is logged under the id, once per error, so an operator can
 * find it from what the caller saw.
 */

const ids = new WeakMap<object, string>();

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
  let id = ids.get(error);
  if (id === undefined) {
    id = randomBytes(8).toString('hex');
    ids.set(error, id);
    console.error(
      JSON.stringify({
        level: 'error',
        msg: 'console request failed',
        errorId: id,
        path,
        code: error.code,
        // Never the statement's parameters (a channel's URL and secret among them), a credential or a whole URL.
        ...logSafeError(error.cause ?? error),
      }),
    );
  }
  return error.code === 'INTERNAL_SERVER_ERROR' ? `internal error; id ${id}` : `${error.code}: the request could not be read; id ${id}`;
}
