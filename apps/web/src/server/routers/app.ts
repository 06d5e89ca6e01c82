import { router } from '../trpc';
import { auditRouter } from './audit';
import { authRouter } from './auth';
import { backfillsRouter } from './backfills';
import { clusterRouter } from './cluster';
import { dagsRouter } from './dags';
import { limitsRouter } from './limits';
import { notificationsRouter } from './notifications';
import { runsRouter } from './runs';
import { runActionsRouter } from './run-actions';
import { tokensRouter } from './tokens';
import { usersRouter } from './users';

export const appRouter = router({
  auth: authRouter,
  cluster: clusterRouter,
  dags: dagsRouter,
  runs: runsRouter,
  runActions: runActionsRouter,
  users: usersRouter,
  tokens: tokensRouter,
  audit: auditRouter,
  backfills: backfillsRouter,
  limits: limitsRouter,
  notifications: notificationsRouter,
});

export type AppRouter = typeof appRouter;
