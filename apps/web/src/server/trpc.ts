import { initTRPC, TRPCError } from '@trpc/server';
import superjson from 'superjson';
import { isFencelineError, roleAtLeast, type FencelineError } from '@fenceline/core';
import { consoleConfig } from './config';
import { buildContext, type Context } from './context';
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
  errorFormatter({ shape, error }) {
    const cause = error.cause;
    const fenceline: FencelineErrorData | null = isFencelineError(cause) ? cause.toJSON() : null;
    return { ...shape, message: inputProblems(cause) ?? shape.message, data: { ...shape.data, fenceline } };
  },
});

/**
 * An input that failed its schema, as "field: problem" per issue. tRPC's own message for it
 * is the issues' JSON, which the console would show as it is.
 */
function inputProblems(cause: unknown): string | null {
  // A refused DAG's issues have paths of their own (text, not zod's arrays) and its message already lists them.
  if (isFencelineError(cause)) return null;
  const issues = (cause as { issues?: unknown } | undefined)?.issues;
  if (!Array.isArray(issues) || issues.length === 0) return null;
  return issues
    .map((i: { path?: PropertyKey[]; message?: string }) => `${i.path && i.path.length > 0 ? i.path.map(String).join('.') : 'input'}: ${i.message ?? 'invalid'}`)
    .join('; ');
}

export const router = t.router;
export const publicProcedure = t.procedure;

/**
 * Every procedure but sign-in goes through one of these three: a viewer may read, an
 * operator may also edit, trigger and pause, an admin may also manage users, everyone's
 * tokens and sessions. The refusal names the role that is missing.
 */
export const viewerProcedure = t.procedure.use(({ ctx, next }) => {
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
                : 'BAD_REQUEST';
      throw new TRPCError({ code, message: `${err.code}: ${err.message}`, cause: err });
    }
    throw err;
  }
}

export function settings(): { capFraction: number; liveWindowMs: number } {
  const config = consoleConfig();
  return { capFraction: config.capFraction, liveWindowMs: config.workerLiveWindowMs };
}
