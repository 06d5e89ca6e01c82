import { z } from 'zod';
import { storableText } from '@fenceline/core';
import { AUDIT_ACTIONS } from '@fenceline/core/store';
import { router, viewerProcedure, withStore } from '../trpc';

export const auditRouter = router({
  /** The audit log, newest first, filtered by actor, action and DAG; read-only for everyone, like every page. */
  list: viewerProcedure
    .input(
      z.object({
        actor: storableText().min(1).max(200).optional(),
        action: z.enum(AUDIT_ACTIONS).optional(),
        dagId: storableText().min(1).max(2000).optional(),
        beforeId: storableText().max(40).optional(),
        limit: z.number().int().min(1).max(500).default(100),
      }),
    )
    .query(({ input }) => withStore((store) => store.listAudit(input))),
});
