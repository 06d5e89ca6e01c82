import { z } from 'zod';
import { runTimeline } from '@fenceline/db/console';
import { router, settings, viewerProcedure, withStore } from '../trpc';

const id = z.string().regex(/^[0-9]{1,18}$/, 'must be a numeric id');
/**
 * A run id as it comes from the page's URL: anything that is not a run's id (/runs/abc)
 * is answered NOT_FOUND by the store, like an id no run has, so the page says there is no
 * such run rather than showing a validation error.
 */
const runIdFromUrl = z.string().max(200);

export const runsRouter = router({
  timeline: viewerProcedure.input(z.object({ runId: runIdFromUrl })).query(({ input }) => withStore((store) => runTimeline(store.db, input.runId, settings()))),
  /** What the worker wrote for the job: output, error and captured logs, under the highest fence accepted. */
  result: viewerProcedure.input(z.object({ jobId: id })).query(({ input }) => withStore((store) => store.getResult(input.jobId))),
});
