import { z } from 'zod';
import { catchupSchema } from '@fenceline/core';
import { dagListPage } from '@fenceline/db/console';
import { clusterShardCount } from '../store';
import { operatorProcedure, router, settings, viewerProcedure, withStore } from '../trpc';

const dagId = z.string().min(1).max(200);

export const dagsRouter = router({
  list: viewerProcedure
    .input(
      z.object({
        search: z.string().max(200).optional(),
        sort: z.enum(['id', 'nextRunAt', 'updatedAt']).default('id'),
        direction: z.enum(['asc', 'desc']).default('asc'),
        limit: z.number().int().min(1).max(200).default(50),
        offset: z.number().int().min(0).max(10_000_000).default(0),
      }),
    )
    .query(({ input }) => withStore((store) => dagListPage(store.db, { ...input, ...settings() }))),

  get: viewerProcedure.input(z.object({ id: dagId })).query(({ input }) =>
    withStore(async (store) => {
      const [dag, versions, runs] = await Promise.all([
        store.getDag(input.id),
        store.listDagVersions(input.id),
        store.listRuns({ dagId: input.id, limit: 30 }),
      ]);
      return { dag, versions, runs, now: await store.now() };
    }),
  ),

  /** Every version's spec, newest first, for the history and its diffs. */
  versions: viewerProcedure.input(z.object({ id: dagId })).query(({ input }) => withStore((store) => store.listDagVersions(input.id))),

  /** Validates and stores a spec; a changed spec becomes a new version, runs in flight keep theirs. */
  save: operatorProcedure.input(z.object({ spec: z.unknown() })).mutation(({ input }) =>
    withStore(async (store) => store.putDag(input.spec as Parameters<typeof store.putDag>[0], await clusterShardCount())),
  ),

  trigger: operatorProcedure.input(z.object({ id: dagId })).mutation(({ input }) => withStore((store) => store.triggerRun(input.id))),

  setPaused: operatorProcedure
    .input(z.object({ id: dagId, paused: z.boolean() }))
    .mutation(({ input }) => withStore((store) => store.setPaused(input.id, input.paused))),

  /** Catch-up is part of the spec, so changing it stores a new version like any other edit. */
  setCatchup: operatorProcedure
    .input(z.object({ id: dagId, catchup: catchupSchema }))
    .mutation(({ input }) =>
      withStore(async (store) => {
        const dag = await store.getDag(input.id);
        return store.putDag({ ...dag.spec, catchup: input.catchup }, await clusterShardCount());
      }),
    ),
});
