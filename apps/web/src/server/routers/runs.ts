import { z } from 'zod';
import { jobIdSchema } from '@fenceline/core';
import { runTimeline } from '@fenceline/db/console';
import { router, settings, viewerProcedure, withStore } from '../trpc';
import { runIdFromUrl } from '../url-ids';

/**
 * A run id as it comes from the page's URL: anything that is not a run's id (/runs/abc)
 * is answered NOT_FOUND, like an id no run has, so the page says there is no such run
 * rather than showing a validation error.
 */
const runIdText = z.string().max(200);

export const runsRouter = router({
  timeline: viewerProcedure.input(z.object({ runId: runIdText })).query(({ input }) => withStore(async (store) => runTimeline(store.db, runIdFromUrl(input.runId), settings()))),
  /** What the worker wrote for the job: output, error and captured logs, under the highest fence accepted. */
  result: viewerProcedure.input(z.object({ jobId: jobIdSchema })).query(({ input }) => withStore((store) => store.getResult(input.jobId))),
});
