import { z } from 'zod';
import { jobIdSchema, RUN_CURSOR_MAX_LENGTH } from '@fenceline/core';
import { runDurations, runTimeline } from '@fenceline/db/console';
import { router, settings, viewerProcedure, withStore } from '../trpc';
import { runIdFromUrl } from '../url-ids';
import { runPageQueryFromUrl } from '../run-filters';

/**
 * A run id as it comes from the page's URL: anything that is not a run's id (/runs/abc)
 * is answered NOT_FOUND, like an id no run has, so the page says there is no such run
 * rather than showing a validation error.
 */
const runIdText = z.string().max(200);

/**
 * The runs list's filters as the page's URL holds them (?state=failed&from=...): text,
 * checked by runPageQueryFromUrl, so a hand-edited URL is answered INVALID_INPUT naming
 * its parameter rather than with a schema's issues.
 */
const runFilterText = z.string().max(RUN_CURSOR_MAX_LENGTH).optional();

/** How many earlier runs the run page compares a run with. */
const RUN_HISTORY = 20;

export const runsRouter = router({
  /** A page of runs of every DAG (or one), filtered and ordered, by keyset cursor. */
  list: viewerProcedure
    .input(
      z.object({
        dag: runFilterText,
        state: runFilterText,
        trigger: runFilterText,
        from: runFilterText,
        to: runFilterText,
        order: runFilterText,
        cursor: runFilterText,
        limit: runFilterText,
      }),
    )
    .query(({ input }) =>
      withStore(async (store) => {
        const page = await store.pageRuns(runPageQueryFromUrl(input));
        return { ...page, now: await store.now() };
      }),
    ),
  timeline: viewerProcedure.input(z.object({ runId: runIdText })).query(({ input }) => withStore(async (store) => runTimeline(store.db, runIdFromUrl(input.runId), settings()))),
  /** The run's duration beside the last 20 succeeded runs of its DAG before it, for the run page's comparison. */
  durations: viewerProcedure
    .input(z.object({ runId: runIdText }))
    .query(({ input }) => withStore((store) => runDurations(store.db, runIdFromUrl(input.runId), { limit: RUN_HISTORY }))),
  /** Every attempt of the job that wrote a result, oldest first: each one's outcome, error, output and logs. */
  attempts: viewerProcedure.input(z.object({ jobId: jobIdSchema })).query(({ input }) => withStore((store) => store.listAttempts(input.jobId))),
  /** The log lines an attempt streamed while it ran, after the chunk `afterSeq`, for the job panel's live tail. */
  logChunks: viewerProcedure
    .input(z.object({ jobId: jobIdSchema, fence: z.number().int().min(0), afterSeq: z.number().int().min(0).default(0) }))
    .query(({ input }) => withStore((store) => store.listLogChunks({ jobId: input.jobId, fence: input.fence, afterSeq: input.afterSeq }))),
  /** Each job's accepted result's fence and effect outcomes, for the run page's Effects card (no outputs or logs). */
  effects: viewerProcedure
    .input(z.object({ runId: runIdText }))
    .query(({ input }) =>
      withStore(async (store) => (await store.listRunResults(runIdFromUrl(input.runId))).map((r) => ({ jobId: r.jobId, fence: r.fence, effects: r.effects ?? [] }))),
    ),
  /** What the worker wrote for the job: output, error and captured logs, under the highest fence accepted. */
  result: viewerProcedure.input(z.object({ jobId: jobIdSchema })).query(({ input }) => withStore((store) => store.getResult(input.jobId))),
});
