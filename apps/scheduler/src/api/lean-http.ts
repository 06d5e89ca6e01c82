import type { IncomingMessage, ServerResponse } from 'node:http';
import { callTRPCProcedure, getTRPCErrorFromUnknown, getTRPCErrorShape, TRPCError } from '@trpc/server';
import { getHTTPStatusCodeFromError } from '@trpc/server/http';
import type { SchedulerNode } from '@fenceline/core/engine';
import { bearer } from './auth';
import type { WorkerContext } from './trpc';
import { authUnavailable, type WorkerAuth } from './worker-auth';
import { workerRouter } from './worker-router';

/**
 * The worker protocol's hot procedures: every job and every renewal goes through one of
 * them, many times a second per worker (`upstream` once for every job that has dependencies).
 */
export const HOT_PROCEDURES = new Set(['poll', 'renew', 'renewMany', 'complete', 'completeMany', 'fail', 'failMany', 'release', 'releaseMany', 'upstream']);

/**
 * Serves one unbatched tRPC mutation of the worker protocol straight from node:http. It
 * runs the same procedure (the same input schema, auth and typed-error middlewares) and
 * writes the same wire format as the standalone adapter, minus the adapter's per-request
 * cost of building a fetch Request, abort signals and web streams around it, which is
 * what a scheduler answering thousands of small requests a second spends its CPU on.
 */
export function serveHot(node: SchedulerNode, auth: WorkerAuth, maxBodyBytes: number, path: string, req: IncomingMessage, res: ServerResponse): void {
  // The credential is looked up (from the cache, nearly always) while the body arrives.
  const caller = auth.authenticate(bearer(req.headers.authorization)).catch(() => Promise.reject(authUnavailable()));
  // Awaited below once the body is in; a request that errors first must not leave it unhandled.
  caller.catch(() => undefined);
  node.metrics.inc(`http_requests_total{procedure="${path}"}`);
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk: Buffer) => {
    size += chunk.length;
    if (size > maxBodyBytes) {
      tooLarge = true;
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => res.destroy());
  req.on('end', () => {
    let input: unknown;
    let early: TRPCError | null = null;
    if (tooLarge) early = new TRPCError({ code: 'PAYLOAD_TOO_LARGE', message: `request body is larger than ${maxBodyBytes} bytes` });
    else if (size > 0) {
      try {
        input = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch (cause) {
        early = new TRPCError({ code: 'PARSE_ERROR', message: 'the request body is not valid JSON', cause });
      }
    }
    let ctx: WorkerContext = { node, req, res, caller: null };
    const call = early
      ? Promise.reject(early)
      : caller.then((found) => {
          ctx = { node, req, res, caller: found };
          return callTRPCProcedure({ router: workerRouter, path, type: 'mutation', ctx, getRawInput: async () => input, signal: undefined, batchIndex: 0 });
        });
    call.then(
      (data: unknown) => send(res, 200, { result: { data } }),
      (cause: unknown) => {
        const error = getTRPCErrorFromUnknown(cause);
        const shape = getTRPCErrorShape({ config: workerRouter._def._config, error, type: 'mutation', path, input, ctx });
        send(res, getHTTPStatusCodeFromError(error), { error: shape });
      },
    );
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  // A poll whose client hung up has nobody to answer.
  if (res.writableEnded || res.destroyed) return;
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}
