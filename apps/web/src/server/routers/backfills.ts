import { z } from 'zod';
import { BACKFILL_MODES, backfillIdSchema, dagIdSchema, LIMITS, parseInstant, type BackfillMode } from '@fenceline/core';
import { auditChange } from '../audit';
import { requestKeySchema } from '../request-key';
import { operatorProcedure, router, viewerProcedure, withStore } from '../trpc';
import { dagIdFromUrl } from '../url-ids';

/** An instant as the form sends it: ISO 8601 text, which the store checks as a date. */
const instant = z.string().min(1).max(64);

export const backfillsRouter = router({
  /** A DAG's backfills, newest first, with their progress, and store time now. */
  list: viewerProcedure.input(z.object({ dagId: z.string().min(1).max(2000) })).query(({ input }) =>
    withStore(async (store) => {
      const dagId = dagIdFromUrl(input.dagId);
      return { backfills: await store.listBackfills({ dagId, limit: 20 }), now: await store.now() };
    }),
  ),

  /**
   * Records a backfill of [from, to) for the shard's leader to run. Above
   * LIMITS.backfillConfirmSlots slots the store refuses it unless `confirm` is set, and the
   * form asks the operator first; every other refusal names its field.
   */
  create: operatorProcedure
    .input(
      z.object({
        dagId: dagIdSchema,
        from: instant,
        to: instant,
        maxActiveRuns: z.number().int().min(1).max(LIMITS.maxMaxActiveRuns).optional(),
        confirm: z.boolean().optional(),
        /** skip (the default) leaves slots that have a run; rerun clears their ended runs to run again. */
        mode: z.enum(BACKFILL_MODES as [BackfillMode, ...BackfillMode[]]).optional(),
        /** The API's Idempotency-Key, the caller's own: the same request repeated with it starts nothing and returns the first backfill. */
        requestKey: requestKeySchema.optional(),
      }),
    )
    .mutation(({ input, ctx }) =>
      withStore(async (store) => {
        const b = await store.createBackfill({
          dagId: input.dagId,
          from: parseInstant(input.from, 'from'),
          to: parseInstant(input.to, 'to'),
          maxActiveRuns: input.maxActiveRuns,
          confirm: input.confirm,
          mode: input.mode,
          requestedBy: ctx.principal.user.name,
          requestKey: input.requestKey,
          requestOwner: ctx.principal.user.id,
        });
        // A repeated request wrote nothing, so it records nothing.
        if (b.repeated) return b;
        const details = { backfillId: b.id, from: b.fromAt.toISOString(), to: b.toAt.toISOString(), slots: b.totalSlots, maxActiveRuns: b.maxActiveRuns };
        await auditChange(store, ctx, {
          action: 'backfill.created',
          dagId: b.dagId,
          target: b.id,
          details: input.requestKey ? { ...details, requestKey: input.requestKey } : details,
        });
        return b;
      }),
    ),

  /** Stops a running backfill; cancelling one that already ended changes and records nothing. */
  cancel: operatorProcedure.input(z.object({ id: backfillIdSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const before = await store.getBackfill(input.id);
      const b = await store.cancelBackfill(input.id);
      if (before.state === 'running' && b.state === 'cancelled') await auditChange(store, ctx, { action: 'backfill.cancelled', dagId: b.dagId, target: b.id });
      return b;
    }),
  ),
});
