import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { checkBoundary, isFencelineError, roleAtLeast, type FencelineError, type LendReserve } from '@fenceline/core';
import { consoleConfig } from './config';
import { buildContext, type Context } from './context';
import { opaqueMessage } from './opaque-errors';
import { consoleStore, type ConsoleStore } from './store';

export type { Context } from './context';
export const createContext = buildContext;

/** The wire form of a typed refusal, so the console shows the store's code and message as they are. */
export interface FencelineErrorData {
  code: FencelineError['code'];
  message: string;
  details: Record<string, unknown>;
}

const t = initTRPC.context<Context>().create({
  transformer: superjson,
  // No answer carries a stack, and an unexpected error carries only an opaque id (opaque-errors.ts).
  errorFormatter({ shape, error, path }) {
    const cause = error.cause;
    const fenceline: FencelineErrorData | null = isFencelineError(cause) ? cause.toJSON() : null;
    const message = opaqueMessage(error, path) ?? inputProblems(cause) ?? shape.message;
    const { stack: _stack, ...data } = shape.data;
    return { ...shape, message, data: { ...data, fenceline } };
  },
});

/**
 * An input that failed its schema, as "field: problem" per issue. tRPC's own message for it
 * is the issues' JSON, which the console would show as it is.
 */
function inputProblems(cause: unknown): string | null {
  // A typed refusal's issues (a DAG spec's) are its own; its message already sums them up.
  if (isFencelineError(cause)) return null;
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return null;
  return issues
    .map(
      (i: { path?: unknown; message?: unknown }) =>
        `${Array.isArray(i.path) && i.path.length > 0 ? i.path.map(String).join('.') : 'input'}: ${typeof i.message === 'string' ? i.message : 'invalid'}`,
    )
    .join('; ');
}

export const router = t.router;

/**
 * Every procedure, sign-in included, starts here: its raw input passes the one boundary
 * check (every string and key, every date, the nesting; input/boundary.ts) before its own
 * schema, the role checks or any store call, so no field can take a NUL, a lone surrogate,
 * a string past the limit or an instant no store can hold.
 */
export const publicProcedure = t.procedure.use(async ({ getRawInput, next }) => {
  try {
    checkBoundary(await getRawInput(), 'input');
  } catch (err) {
    if (isFencelineError(err)) throw new TRPCError({ code: 'BAD_REQUEST', message: err.message, cause: err });
    throw err;
  }
  return next();
});

/**
 * Every procedure but sign-in goes through one of these three: a viewer may read, an
 * operator may also edit, trigger and pause, an admin may also manage users, everyone's
 * tokens and sessions. The refusal names the role that is missing.
 */
export const viewerProcedure = publicProcedure.use(({ ctx, next }) => {
  if (ctx.role === null || ctx.principal === null) throw new TRPCError({ code: 'UNAUTHORIZED', message: 'UNAUTHORIZED: sign in, or send an API token as Authorization: Bearer' });
  return next({ ctx: { ...ctx, role: ctx.role, principal: ctx.principal } });
});

export const operatorProcedure = viewerProcedure.use(({ ctx, next }) => {
  if (!roleAtLeast(ctx.role, 'operator')) throw new TRPCError({ code: 'FORBIDDEN', message: `FORBIDDEN: this needs the operator role; you are signed in as ${ctx.role}` });
  return next({ ctx });
});

export const adminProcedure = viewerProcedure.use(({ ctx, next }) => {
  if (!roleAtLeast(ctx.role, 'admin')) throw new TRPCError({ code: 'FORBIDDEN', message: `FORBIDDEN: this needs the admin role; you are signed in as ${ctx.role}` });
  return next({ ctx });
});

/** Runs a store call, turning typed refusals into tRPC errors that keep the original as `cause`. */
export async function withStore<T>(fn: (store: ConsoleStore) => Promise<T>): Promise<T> {
  const store = await consoleStore();
  try {
    return await fn(store);
  } catch (err) {
    if (isFencelineError(err)) {
      const code =
        err.code === 'NOT_FOUND'
          ? 'NOT_FOUND'
          : err.code === 'UNAUTHORIZED'
            ? 'UNAUTHORIZED'
            : err.code === 'FORBIDDEN'
              ? 'FORBIDDEN'
              : err.code === 'DEPOSED_LEADER' || err.code === 'STALE_FENCE' || err.code === 'LEASE_LOST'
                ? 'CONFLICT'
                : err.code === 'KEY_REUSED'
                  ? 'UNPROCESSABLE_CONTENT'
                  : 'BAD_REQUEST';
      throw new TRPCError({ code, message: `${err.code}: ${err.message}`, cause: err });
    }
    throw err;
  }
}

export function settings(): { capFraction: number; liveWindowMs: number; lendReserve: LendReserve | null } {
  const config = consoleConfig();
  return { capFraction: config.capFraction, liveWindowMs: config.workerLiveWindowMs, lendReserve: config.lendReserve };
}
