import { z } from 'zod';
import { actionIdSchema, LIMITS, MAX_REASON_LENGTH, RUN_ACTION_KINDS } from '@fenceline/core';
import { type RunActionKind } from '@fenceline/core/store';
import { auditChange } from '../audit';
import { requestKeySchema } from '../request-key';
import { operatorProcedure, router, viewerProcedure, withStore } from '../trpc';
import { runIdFromUrl } from '../url-ids';

const runIdText = z.string().max(200);

/**
 * Operator actions on runs (cancel, clear, retry from failure, mark success or failed).
 * A request is stored and applied by the shard's leader; the console polls `get` until it
 * is applied. Only operators may ask; every request is written to the audit log, and the
 * leader writes what it changed to the event log.
 */
export const runActionsRouter = router({
  request: operatorProcedure
    .input(
      z.object({
        runId: runIdText,
        kind: z.enum(RUN_ACTION_KINDS as [RunActionKind, ...RunActionKind[]]),
        taskIds: z.array(z.string().max(LIMITS.maxIdLength)).max(LIMITS.maxTasksPerDag).default([]),
        downstream: z.boolean().default(false),
        reason: z.string().max(MAX_REASON_LENGTH).nullable().default(null),
        requestKey: requestKeySchema.optional(),
      }),
    )
    .mutation(({ input, ctx }) =>
      withStore(async (store) => {
        const runId = runIdFromUrl(input.runId);
        const { repeated, ...action } = await store.requestRunAction({
          runId,
          kind: input.kind,
          taskIds: input.taskIds,
          downstream: input.downstream,
          reason: input.reason,
          requestedBy: ctx.principal.user.name,
          ...(input.requestKey ? { requestKey: input.requestKey, requestOwner: ctx.principal.user.id } : {}),
        });
        // A repeat stored nothing, so it records nothing: the first request's entry stands, with its own caller.
        if (repeated) return action;
        await auditChange(store, ctx, {
          action: 'run.action_requested',
          dagId: action.dagId,
          target: action.runId,
          details: { actionId: action.id, kind: action.kind, taskIds: action.taskIds, downstream: action.downstream, reason: action.reason },
        });
        return action;
      }),
    ),
  get: viewerProcedure.input(z.object({ actionId: actionIdSchema })).query(({ input }) => withStore((store) => store.getRunAction(input.actionId))),
  list: viewerProcedure.input(z.object({ runId: runIdText })).query(({ input }) => withStore((store) => store.listRunActions(runIdFromUrl(input.runId)))),
});
