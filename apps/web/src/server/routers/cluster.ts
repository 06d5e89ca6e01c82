import { z } from 'zod';
import { fairShare, overview, shareHistory, shardsSnapshot, workersSnapshot } from '@fenceline/db/console';
import { consoleConfig } from '../config';
import { router, settings, viewerProcedure, withStore } from '../trpc';

export const clusterRouter = router({
  overview: viewerProcedure.query(() => withStore((store) => overview(store.db, settings()))),
  shards: viewerProcedure.query(() => withStore((store) => shardsSnapshot(store.db, settings()))),
  workers: viewerProcedure.query(() =>
    withStore(async (store) => ({
      ...(await workersSnapshot(store.db, { liveWindowMs: settings().liveWindowMs, recentMs: 60 * 60 * 1000 })),
      leaseTtlMs: consoleConfig().leaseTtlMs,
    })),
  ),
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
        const top = snapshot.dags.slice(0, 8);
        const history = await shareHistory(store.db, {
          dagIds: top.map((d) => d.dagId),
          currentHeld: new Map(top.map((d) => [d.dagId, d.held])),
          windowMs: input.windowMs,
          stepMs: Math.max(5_000, Math.round(input.windowMs / 60)),
        });
        return { ...snapshot, history };
      }),
    ),
});
