import { z } from 'zod';
import { jobErrorSchema, jobIdSchema as jobId, jobLogsSchema, jobOutputSchema, workerIdSchema as workerId, workerMetaSchema } from '@fenceline/core';
import { router, workerProcedure, publicProcedure } from './trpc';

const fence = z.number().int().min(0);
// Free-form fields pass the free-form checks (NUL, lone surrogates, depth, size) in the
// schema, so bad bytes are refused with the field's path before any store call.
const logs = jobLogsSchema.nullish();
const output = jobOutputSchema.optional();

/**
 * The worker protocol. A worker registers, long-polls for work, renews its leases in
 * one call per renewal interval, and writes each result with its fence (several results
 * in one call with completeMany; a process hosting many worker identities renews all of
 * their leases in one call with renewMany). A worker can act
 * only on leases it holds: the store checks holder and fence on every write.
 */
export const workerRouter = router({
  hello: publicProcedure.query(({ ctx }) => ({ nodeId: ctx.node.nodeId })),

  register: workerProcedure
    .input(z.object({ workerId, slots: z.number().int().min(1).max(10_000), meta: workerMetaSchema.default({}) }))
    .mutation(({ ctx, input }) => ctx.node.register(input.workerId, input.slots, input.meta)),

  poll: workerProcedure
    .input(z.object({ workerId, slots: z.number().int().min(1).max(10_000), free: z.number().int().min(0).max(10_000), waitMs: z.number().int().min(0).max(120_000).optional() }))
    .mutation(async ({ ctx, input }) => {
      // A client that hangs up must not be handed leases it will never see; only this
      // request's wait ends (the worker may already be waiting again on a new one).
      let cancel: (() => void) | null = null;
      const onClose = (): void => {
        if (!ctx.res.writableEnded) cancel?.();
      };
      ctx.res.once('close', onClose);
      try {
        return await ctx.node.poll({ workerId: input.workerId, slots: input.slots, freeSlots: input.free, waitMs: input.waitMs }, { onCancel: (fn) => (cancel = fn) });
      } finally {
        ctx.res.off('close', onClose);
      }
    }),

  renew: workerProcedure
    .input(z.object({ workerId, leases: z.array(z.object({ jobId, fence })).max(10_000) }))
    .mutation(({ ctx, input }) => ctx.node.renew(input.workerId, input.leases)),

  renewMany: workerProcedure
    .input(z.object({ renewals: z.array(z.object({ workerId, jobId, fence })).max(10_000) }))
    .mutation(({ ctx, input }) => ctx.node.renewMany(input.renewals)),

  completeMany: workerProcedure
    .input(
      z.object({
        workerId,
        results: z.array(z.object({ jobId, fence, output, logs })).min(1).max(1_000),
      }),
    )
    .mutation(async ({ ctx, input }) => {
      const outcomes = await ctx.node.completeMany(input.workerId, input.results);
      return outcomes.map((o) =>
        o.ok ? { jobId: o.jobId, ok: true as const, state: o.row.state, fence: o.row.fence } : { jobId: o.jobId, ok: false as const, error: o.error.toJSON() },
      );
    }),

  complete: workerProcedure.input(z.object({ workerId, jobId, fence, output, logs })).mutation(async ({ ctx, input }) => {
    const row = await ctx.node.complete(input.workerId, input);
    return { jobId: row.id, state: row.state, fence: row.fence };
  }),

  fail: workerProcedure.input(z.object({ workerId, jobId, fence, error: jobErrorSchema, retryable: z.boolean().default(true), logs })).mutation(async ({ ctx, input }) => {
    const row = await ctx.node.fail(input.workerId, input);
    return { jobId: row.id, state: row.state, fence: row.fence, nextAttemptAt: row.nextAttemptAt?.toISOString() ?? null };
  }),

  // The reason says why the worker gives the job back; the event log keeps it.
  release: workerProcedure.input(z.object({ workerId, jobId, fence, reason: z.enum(['stopping', 'no-free-slot']).optional() })).mutation(async ({ ctx, input }) => {
    const row = await ctx.node.release(input.workerId, input);
    return { jobId: row.id, state: row.state, fence: row.fence };
  }),
});

export type WorkerRouter = typeof workerRouter;
