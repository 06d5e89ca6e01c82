import { initTRPC, TRPCError } from '@trpc/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { DEFAULT_POOL, FencelineError, ForbiddenError, isStoreUnavailable, poolAllows, type WorkerOffer } from '@fenceline/core';
import { type SchedulerNode } from '@fenceline/core/engine';
import { internalErrorMessage } from './opaque-errors';
import type { WorkerCaller } from './worker-auth';
import { secretHash } from '@fenceline/db/people';

export interface WorkerContext {
  node: SchedulerNode;
  /** Who the bearer token stands for; null when it stands for nobody. */
  caller: WorkerCaller | null;
  res: ServerResponse;
  req: IncomingMessage;
}

const HTTP_CODE: Record<string, TRPCError['code']> = {
  STALE_FENCE: 'CONFLICT',
  FORGED_FENCE: 'CONFLICT',
  LEASE_LOST: 'CONFLICT',
  DEPOSED_LEADER: 'CONFLICT',
  NOT_FOUND: 'NOT_FOUND',
  INVALID_DAG: 'BAD_REQUEST',
  INVALID_INPUT: 'BAD_REQUEST',
  UNAUTHORIZED: 'UNAUTHORIZED',
  FORBIDDEN: 'FORBIDDEN',
  TOO_LARGE: 'PAYLOAD_TOO_LARGE',
};

const t = initTRPC.context<WorkerContext>().create({
  // The typed refusal travels as data.fenceline, so a client rebuilds the same error class.
  // Anything else unexpected is answered with an opaque id only (opaque-errors.ts).
  errorFormatter({ shape, error, path, ctx }) {
    if (error.code === 'INTERNAL_SERVER_ERROR') {
      const message = internalErrorMessage(error, { path, nodeId: ctx?.node.nodeId });
      return { ...shape, message, data: { code: shape.data.code, httpStatus: shape.data.httpStatus, path: shape.data.path, stack: undefined, fenceline: null } };
    }
    const cause = error.cause;
    const fenceline = cause instanceof FencelineError ? cause.toJSON() : null;
    return { ...shape, data: { ...shape.data, stack: undefined, fenceline } };
  },
});

export const router = t.router;

/** Converts thrown typed errors into tRPC errors with a fitting HTTP status. */
const typedErrors = t.middleware(async ({ next }) => {
  const result = await next();
  if (!result.ok && result.error.cause instanceof FencelineError) {
    const cause = result.error.cause;
    throw new TRPCError({ code: HTTP_CODE[cause.code] ?? 'BAD_REQUEST', message: cause.message, cause });
  }
  // The store being out of reach is no bug of this request: it is answered 503 and not
  // logged per request (the node logs the outage once when it begins and once when it
  // ends), and the worker sends the call again, to this node or another.
  if (!result.ok && isStoreUnavailable(result.error.cause)) {
    throw new TRPCError({ code: 'SERVICE_UNAVAILABLE', message: 'the store is unavailable; try again' });
  }
  return result;
});

export const publicProcedure = t.procedure.use(typedErrors);

/** Every worker procedure requires a valid worker credential. */
export const workerProcedure = publicProcedure.use(({ ctx, next }) => {
  if (!ctx.caller) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'a valid worker credential is required (Authorization: Bearer <token>)' });
  return next();
});

/**
 * The worker id a request acts as, checked against the caller's credential: a credential
 * acts only as worker ids of its own pool. Every procedure checks every id it names.
 */
export function actAs<Id extends string>(ctx: WorkerContext, workerId: Id, field = 'workerId'): Id {
  const pool = ctx.caller?.pool ?? null;
  if (pool !== null && !poolAllows(pool, workerId)) {
    throw new ForbiddenError(`${field}: this credential acts only as workers of pool ${pool} ("${pool}" or "${pool}-..."), not ${workerId}`, { field });
  }
  return workerId;
}

/**
 * A worker's offer with its pool filled in: the credential's pool when the worker named
 * none (the default pool for the development token). Whether the pool is one the
 * credential may serve is the node's check (WorkerProtocol), so it holds on every node.
 */
export function offerOf(ctx: WorkerContext, offer: (Omit<WorkerOffer, 'pool'> & { pool?: string | undefined }) | undefined): WorkerOffer | undefined {
  if (!offer) return undefined;
  return { ...offer, pool: offer.pool ?? ctx.caller?.pool ?? DEFAULT_POOL };
}

/** The session key the store checks: the hash of the secret, so the secret itself is never stored. */
export const sessionKey = (secret: string): string => secretHash(secret);
