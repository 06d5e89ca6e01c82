import { z } from 'zod';
import { NotFoundError } from '@fenceline/core';
import { limitWaiters } from '@fenceline/db/console';
import { auditChange } from '../audit';
import { operatorProcedure, router, viewerProcedure, withStore } from '../trpc';

/** How many waiting jobs the Fair share page lists per limit; the count of all of them comes with the limit. */
const WAITERS_SHOWN = 20;

/**
 * Named resource limits: every signed-in user sees them with their use and who waits for
 * them; operators and admins set and delete them. The store checks a limit's name and
 * capacity and refuses bad input naming the field, so the schemas here only pass the values
 * on; each change is audited after it succeeded, so a refused one leaves no entry.
 */
export const limitsRouter = router({
  list: viewerProcedure.query(() =>
    withStore(async (store) => {
      const limits = await store.listResourceLimits();
      const waiters = await limitWaiters(store.db, { perLimit: WAITERS_SHOWN });
      return { limits: limits.map((l) => ({ ...l, waiters: waiters.get(l.name) ?? [] })), waitersShown: WAITERS_SHOWN };
    }),
  ),

  set: operatorProcedure.input(z.object({ name: z.string().max(200), capacity: z.number() })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const before = (await store.listResourceLimits()).find((l) => l.name === input.name);
      const row = await store.setResourceLimit(input);
      await auditChange(store, ctx, { action: 'limit.set', target: row.name, details: { capacity: row.capacity, previous: before?.capacity ?? null } });
      return row;
    }),
  ),

  delete: operatorProcedure.input(z.object({ name: z.string().max(200) })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const before = (await store.listResourceLimits()).find((l) => l.name === input.name);
      if (!(await store.deleteResourceLimit(input.name))) throw new NotFoundError(`limit "${input.name}" does not exist`);
      await auditChange(store, ctx, { action: 'limit.deleted', target: input.name, details: { capacity: before?.capacity ?? null } });
      return { name: input.name, deleted: true };
    }),
  ),
});
