import { z } from 'zod';
import { fairShare, liveOffers, overview, shareHistory, shardsSnapshot, workersSnapshot } from '@fenceline/db/console';
import { consoleConfig } from '../config';
import { router, settings, viewerProcedure, withStore } from '../trpc';

export const clusterRouter = router({
  overview: viewerProcedure.query(() => withStore((store) => overview(store.db, settings()))),
  shards: viewerProcedure.query(() => withStore((store) => shardsSnapshot(store.db, settings()))),
  workers: viewerProcedure.query(() =>
    withStore(async (store) => {
      const snapshot = await workersSnapshot(store.db, { liveWindowMs: settings().liveWindowMs, recentMs: 60 * 60 * 1000 });
      const live = await liveOffers(store.db, settings().liveWindowMs);
      return { ...snapshot, offers: live.offers, pools: live.pools, leaseTtlMs: consoleConfig().leaseTtlMs };
    }),
  ),
  /** What live workers offer (pool, labels, job types), for the editor's warnings and a run page's waiting reasons. */
  offers: viewerProcedure.query(() => withStore((store) => liveOffers(store.db, settings().liveWindowMs))),
  fairShare: viewerProcedure
    .input(
      z
        .object({
          windowMs: z
            .number()
            .int()
            .min(60_000)
            .max(6 * 3600_000)
            .default(10 * 60_000),
        })
        .default({ windowMs: 10 * 60_000 }),
    )
    .query(({ input }) =>
      withStore(async (store) => {
        const snapshot = await fairShare(store.db, settings());
        // The chart draws one line per DAG, summed over its pools, for the DAGs that hold the most.
        const heldByDag = new Map<string, number>();
        for (const d of snapshot.dags) heldByDag.set(d.dagId, (heldByDag.get(d.dagId) ?? 0) + d.held);
        const top = [...heldByDag.keys()].slice(0, 8);
        const history = await shareHistory(store.db, {
          dagIds: top,
          currentHeld: new Map(top.map((id) => [id, heldByDag.get(id) ?? 0])),
          windowMs: input.windowMs,
          stepMs: Math.max(5_000, Math.round(input.windowMs / 60)),
        });
        return { ...snapshot, history };
      }),
    ),
});
