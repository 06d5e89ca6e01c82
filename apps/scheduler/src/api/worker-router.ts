import { z } from 'zod';
import {
  LIMITS,
  NAME_CHARACTERS,
  NAME_PATTERN,
  jobEffectsSchema,
  jobErrorSchema,
  jobIdSchema as jobId,
  jobLogsSchema,
  jobOutputSchema,
  poolNameSchema,
  workerIdSchema as workerId,
  workerMetaSchema,
  workerOfferSchema,
} from '@fenceline/core';
import { actAs, offerOf, router, sessionKey, workerProcedure, publicProcedure } from './trpc';
import { newSessionSecret } from '@fenceline/db/worker-credentials';

const fence = z.number().int().min(0);
/** A session secret: what register answered (or was sent), presented on every later call. */
const session = z.string().min(32).max(200);
// Free-form fields pass the free-form checks (NUL, lone surrogates, depth, size) in the
// schema, so bad bytes are refused with the field's path before any store call.
const logs = jobLogsSchema.nullish();
const output = jobOutputSchema.optional();
/** The effect outcomes the attempt reported; absent when it reported none. */
const effects = jobEffectsSchema.nullish();
/**
 * What a worker offers. Its pool may be left out: a worker with a pool's credential then
 * serves that pool (and may name no other), one with the development token the default pool.
 */
const offer = workerOfferSchema.extend({ pool: poolNameSchema.optional() }).optional();

/**
 * The worker protocol. A worker registers, long-polls for work, renews its leases in
 * one call per renewal interval, and writes each result with its fence (several results
 * in one call with completeMany; a process hosting many worker identities renews all of
 * their leases in one call with renewMany). A worker can act
 * only on leases it holds, as worker ids its credential allows, offering only its
 * credential's pool: the store checks holder, fence and session on every write, each item
 * of a batch on its own.
 */
export const workerRouter = router({
  hello: publicProcedure.query(({ ctx }) => ({ nodeId: ctx.node.nodeId })),

  // A worker process registers with every node under one session: it may bring its own
  // secret (the worker sends the same one to each node), or take the one answered here.
  register: workerProcedure
    .input(z.object({ workerId, slots: z.number().int().min(1).max(10_000), offer, meta: workerMetaSchema.default({}), session: session.optional() }))
    .mutation(async ({ ctx, input }) => {
      const secret = input.session ?? newSessionSecret();
      const workerId = actAs(ctx, input.workerId);
      const given = offerOf(ctx, input.offer);
      const answer = await ctx.node.protocol.register({
        workerId,
        slots: input.slots,
        pool: ctx.caller!.pool,
        ...(given ? { offer: given } : {}),
        meta: input.meta,
        session: sessionKey(secret),
        credentialId: ctx.caller!.credentialId,
      });
      return { ...answer, session: secret };
    }),

  poll: workerProcedure
    .input(
      z.object({
        workerId,
        session,
        slots: z.number().int().min(1).max(10_000),
        free: z.number().int().min(0).max(10_000),
        waitMs: z.number().int().min(0).max(120_000).optional(),
        offer,
      }),
    )
    .mutation(async ({ ctx, input }) => {
      // A client that hangs up must not be handed leases it will never see; only this
      // request's wait ends (the worker may already be waiting again on a new one). A close
      // that comes before the wait begins (while the node checks the session, or before
      // this handler ran) ends it the moment it begins: else a dead worker's poll would be
      // listed as waiting, and lent against, until its wait ran out.
      let cancel: (() => void) | null = null;
      let hungUp = ctx.res.destroyed;
      const onClose = (): void => {
        if (ctx.res.writableEnded) return;
        hungUp = true;
        cancel?.();
      };
      ctx.res.once('close', onClose);
      const workerId = actAs(ctx, input.workerId);
      const given = offerOf(ctx, input.offer);
      try {
        const jobs = await ctx.node.protocol.poll(
          {
            workerId,
            session: sessionKey(input.session),
            slots: input.slots,
            freeSlots: input.free,
            waitMs: input.waitMs,
            pool: ctx.caller!.pool,
            ...(given ? { offer: given } : {}),
          },
          {
            onCancel: (fn) => {
              cancel = fn;
              if (hungUp) fn();
            },
          },
        );
        // Leases granted in the moment the worker hung up would reach nobody: they go back
        // now rather than wait out their TTL.
        if (hungUp || ctx.res.destroyed) {
          await ctx.node.handBackUndelivered(workerId, jobs);
          return [];
        }
        return jobs;
      } finally {
        ctx.res.off('close', onClose);
      }
    }),

  renew: workerProcedure
    // A lease may carry its job's log lines since the last renewal (at most one chunk), streamed to the store with the renewal.
    .input(z.object({ workerId, session, leases: z.array(z.object({ jobId, fence, log: z.string().max(LIMITS.maxLogChunkChars).optional() })).max(10_000) }))
    .mutation(({ ctx, input }) => ctx.node.protocol.renew({ workerId: actAs(ctx, input.workerId), session: sessionKey(input.session), leases: input.leases })),

  renewMany: workerProcedure
    .input(z.object({ renewals: z.array(z.object({ workerId, session, jobId, fence })).max(10_000) }))
    .mutation(({ ctx, input }) =>
      ctx.node.protocol.renewMany(input.renewals.map((r, i) => ({ ...r, workerId: actAs(ctx, r.workerId, `renewals.${i}.workerId`), session: sessionKey(r.session) }))),
    ),

  completeMany: workerProcedure
    .input(
      z.object({
        workerId,
        session,
        results: z.array(z.object({ jobId, fence, output, logs, effects })).min(1).max(1_000),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const outcomes = await ctx.node.protocol.completeMany({ workerId: actAs(ctx, input.workerId), session: sessionKey(input.session), results: input.results });
      return outcomes.map((o) =>
        o.ok ? { jobId: o.jobId, ok: true as const, state: o.row.state, fence: o.row.fence } : { jobId: o.jobId, ok: false as const, error: o.error.toJSON() },
      );
    }),

  complete: workerProcedure.input(z.object({ workerId, session, jobId, fence, output, logs, effects })).mutation(async ({ ctx, input }) => {
    const row = await ctx.node.protocol.complete({ ...input, workerId: actAs(ctx, input.workerId), session: sessionKey(input.session) });
    return { jobId: row.id, state: row.state, fence: row.fence };
  }),

  fail: workerProcedure
    .input(z.object({ workerId, session, jobId, fence, error: jobErrorSchema, retryable: z.boolean().default(true), logs, effects }))
    .mutation(async ({ ctx, input }) => {
      const row = await ctx.node.protocol.fail({ ...input, workerId: actAs(ctx, input.workerId), session: sessionKey(input.session) });
      return { jobId: row.id, state: row.state, fence: row.fence, nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null };
    }),

  // Several failures of one worker in one request, each fenced and answered on its own, as completeMany.
  failMany: workerProcedure
    .input(
      z.object({
        workerId,
        session,
        failures: z
          .array(z.object({ jobId, fence, error: jobErrorSchema, retryable: z.boolean().default(true), logs, effects }))
          .min(1)
          .max(1_000),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const outcomes = await ctx.node.protocol.failMany({ workerId: actAs(ctx, input.workerId), session: sessionKey(input.session), failures: input.failures });
      return outcomes.map((o) =>
        o.ok
          ? { jobId: o.jobId, ok: true as const, state: o.row.state, fence: o.row.fence, nextAttemptAt: o.row.nextAttemptAt?.toISOString() ?? null }
          : { jobId: o.jobId, ok: false as const, error: o.error.toJSON() },
      );
    }),

  // A fenced read: refused like a write when the fence is no longer the job's current one.
  upstream: workerProcedure
    .input(
      z.object({ workerId, session, jobId, fence, taskIds: z.array(z.string().max(LIMITS.maxIdLength).regex(NAME_PATTERN, NAME_CHARACTERS)).max(LIMITS.maxDependenciesPerTask) }),
    )
    .mutation(({ ctx, input }) => ctx.node.protocol.upstream({ ...input, workerId: actAs(ctx, input.workerId), session: sessionKey(input.session) })),

  // The reason says why the worker gives the job back; the event log keeps it.
  // Several hand-backs of one worker in one request, each fenced and answered on its own.
  releaseMany: workerProcedure
    .input(
      z.object({
        workerId,
        session,
        releases: z
          .array(z.object({ jobId, fence, reason: z.enum(['stopping', 'no-free-slot']).optional() }))
          .min(1)
          .max(1_000),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const outcomes = await ctx.node.protocol.releaseMany({ workerId: actAs(ctx, input.workerId), session: sessionKey(input.session), releases: input.releases });
      return outcomes.map((o) =>
        o.ok ? { jobId: o.jobId, ok: true as const, state: o.row.state, fence: o.row.fence } : { jobId: o.jobId, ok: false as const, error: o.error.toJSON() },
      );
    }),

  release: workerProcedure.input(z.object({ workerId, session, jobId, fence, reason: z.enum(['stopping', 'no-free-slot']).optional() })).mutation(async ({ ctx, input }) => {
    const row = await ctx.node.protocol.release({ ...input, workerId: actAs(ctx, input.workerId), session: sessionKey(input.session) });
    return { jobId: row.id, state: row.state, fence: row.fence };
  }),
});

export type WorkerRouter = typeof workerRouter;
