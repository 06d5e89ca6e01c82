import { router } from '../trpc';
import { authRouter } from './auth';
import { clusterRouter } from './cluster';
import { dagsRouter } from './dags';
import { runsRouter } from './runs';

export const appRouter = router({
  auth: authRouter,
  cluster: clusterRouter,
  dags: dagsRouter,
  runs: runsRouter,
});

export type AppRouter = typeof appRouter;
