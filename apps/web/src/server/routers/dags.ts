import { z } from 'zod';
import { catchupSchema, dagIdSchema as dagId, isDagId, isFencelineError, LIMITS, requestFingerprintText, specsEqual, storableText } from '@fenceline/core';
import { dagListPage, liveJobTypes, MAX_GRID_RUNS, runGrid } from '@fenceline/db/console';
import { auditChange } from '../audit';
import { requestKeySchema } from '../request-key';
import { clusterShardCount, type ConsoleStore } from '../store';
import { operatorProcedure, router, settings, viewerProcedure, withStore } from '../trpc';
import { dagIdFromUrl } from '../url-ids';

/**
 * A DAG id as it comes from the page's URL, for reads: one no DAG could have is answered
 * NOT_FOUND, like any id that names no DAG, not as a validation error.
 */
const dagIdText = z.string().min(1).max(2000);

/**
 * The audit entry of a stored spec: `dag.reverted` when the new version's spec is an older
 * version's again, else `dag.saved`. An unchanged spec stores nothing and records nothing.
 */
async function auditSaved(store: ConsoleStore, ctx: Parameters<typeof auditChange>[1], saved: { dagId: string; version: number; created: boolean }): Promise<void> {
  if (!saved.created) return;
  const id = dagIdFromUrl(saved.dagId);
  const versions = await store.listDagVersions(id);
  const current = versions.find((v) => v.version === saved.version);
  const same = current ? versions.filter((v) => v.version < saved.version && specsEqual(v.spec, current.spec)).pop() : undefined;
  await auditChange(
    store,
    ctx,
    same
      ? { action: 'dag.reverted', dagId: id, details: { version: saved.version, sameAs: same.version } }
      : { action: 'dag.saved', dagId: id, details: { version: saved.version } },
  );
}

async function auditPaused(store: ConsoleStore, ctx: Parameters<typeof auditChange>[1], dagId: string, paused: boolean): Promise<void> {
  await auditChange(store, ctx, { action: paused ? 'dag.paused' : 'dag.resumed', dagId });
}

export const dagsRouter = router({
  list: viewerProcedure
    .input(
      z.object({
        // Matched with ILIKE, where PostgreSQL refuses a NUL before it compares anything.
        search: storableText().max(200).optional(),
        sort: z.enum(['id', 'nextRunAt', 'updatedAt']).default('id'),
        direction: z.enum(['asc', 'desc']).default('asc'),
        limit: z.number().int().min(1).max(200).default(50),
        offset: z.number().int().min(0).max(10_000_000).default(0),
      }),
    )
    .query(({ input }) => withStore((store) => dagListPage(store.db, { ...input, ...settings() }))),

  get: viewerProcedure.input(z.object({ id: dagIdText })).query(({ input }) =>
    withStore(async (store) => {
      const id = dagIdFromUrl(input.id);
      // Its runs are paged apart (runs.list with the DAG), so the page can walk them all.
      const [dag, versions] = await Promise.all([store.getDag(id), store.listDagVersions(id)]);
      return { dag, versions, now: await store.now() };
    }),
  ),

  /**
   * The DAG's last runs by task, for its page's grid: every job's state, attempts and time
   * in each of the last `runs` runs (newest first), with the current version's tasks as rows.
   */
  grid: viewerProcedure
    .input(z.object({ id: dagIdText, runs: z.number().int().min(1).max(MAX_GRID_RUNS).default(25) }))
    .query(({ input }) => withStore((store) => runGrid(store.db, dagIdFromUrl(input.id), { limit: input.runs }))),

  /** Every version's spec, newest first, for the history and its diffs. */
  versions: viewerProcedure.input(z.object({ id: dagIdText })).query(({ input }) => withStore(async (store) => store.listDagVersions(dagIdFromUrl(input.id)))),

  /**
   * Validates and stores a spec; a changed spec becomes a new version, runs in flight keep
   * theirs. The editor shows an existing DAG's `paused` as its live state, so for a DAG that
   * exists `paused` pauses or resumes it rather than going into a version of its own: the
   * spec is stored with the current version's `paused`, and a toggle alone stores nothing.
   *
   * With a request key, a save the store has seen from this caller with that key and this
   * spec already writes nothing (no version, no pause, no audit entry) and answers the
   * version and `created` it stored the first time; its `paused` is null, since this request
   * changed nothing. The caller's key sent with another spec is refused (KEY_REUSED).
   */
  save: operatorProcedure.input(z.object({ spec: z.unknown(), requestKey: requestKeySchema.optional() })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const spec = input.spec as Parameters<typeof store.putDag>[0];
      // An id no DAG can have names no current DAG; putDag refuses the spec with its issues.
      const id = typeof spec === 'object' && spec !== null && isDagId(spec.id) ? spec.id : null;
      // The key is the caller's, and names the spec as sent: the store's input keeps the current pause, which may change between a request and its repeat.
      const keyed =
        input.requestKey === undefined
          ? undefined
          : { requestKey: input.requestKey, requestOwner: ctx.principal.user.id, requestFingerprint: requestFingerprintText('dags.save', id ?? '', input.spec) };
      const current = id === null ? null : await store.getDag(id).catch((err: unknown) => (isFencelineError(err) && err.code === 'NOT_FOUND' ? null : Promise.reject(err)));
      if (current === null) {
        const { repeated, ...created } = await store.putDag(spec, await clusterShardCount(), keyed);
        if (!repeated) await auditSaved(store, ctx, created);
        return { ...created, paused: null };
      }
      const wantPaused = typeof spec.paused === 'boolean' ? spec.paused : current.paused;
      const { repeated, ...saved } = await store.putDag({ ...spec, paused: current.spec.paused }, await clusterShardCount(), keyed);
      if (repeated) return { ...saved, paused: null };
      await auditSaved(store, ctx, saved);
      const paused = wantPaused === current.paused ? null : (await store.setPaused(current.id, wantPaused)).paused;
      if (paused !== null) await auditPaused(store, ctx, current.id, paused);
      return { ...saved, paused };
    }),
  ),

  /**
   * Queues a manual run. The console makes one request key per click, so a click whose
   * request arrives twice (a double click, a retry) queues one run, recorded once; the key
   * is the caller's, and sent with other params it is refused (KEY_REUSED). `params` are the trigger
   * form's values; the store checks them against the DAG's declaration and refuses the
   * trigger, writing nothing, with an issue per bad field (`params.NAME`).
   */
  trigger: operatorProcedure
    .input(
      z.object({
        id: dagId,
        requestKey: requestKeySchema.optional(),
        params: z.record(z.string().max(LIMITS.maxParamNameLength), z.unknown()).optional(),
      }),
    )
    .mutation(({ input, ctx }) =>
      withStore(async (store) => {
        const { repeated, ...run } = await store.triggerRun(input.id, { requestKey: input.requestKey, requestOwner: ctx.principal.user.id, params: input.params });
        // A repeat queued nothing, so it records nothing: the entry of the first request stands, with its own caller.
        if (repeated) return run;
        await auditChange(store, ctx, {
          action: 'dag.triggered',
          dagId: input.id,
          details: { runId: run.id, ...(input.requestKey ? { requestKey: input.requestKey } : {}), ...(Object.keys(run.params).length > 0 ? { params: run.params } : {}) },
        });
        return run;
      }),
    ),

  /** The job types live workers run, for the editor's palette. */
  jobTypes: viewerProcedure.query(() => withStore((store) => liveJobTypes(store.db, settings().liveWindowMs))),

  setPaused: operatorProcedure.input(z.object({ id: dagId, paused: z.boolean() })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const before = await store.getDag(input.id);
      const dag = await store.setPaused(input.id, input.paused);
      // Pausing a paused DAG changes nothing, so it records nothing.
      if (before.paused !== dag.paused) await auditPaused(store, ctx, dag.id, dag.paused);
      return dag;
    }),
  ),

  /** Catch-up is part of the spec, so changing it stores a new version like any other edit. */
  setCatchup: operatorProcedure.input(z.object({ id: dagId, catchup: catchupSchema })).mutation(({ input, ctx }) =>
    withStore(async (store) => {
      const dag = await store.getDag(input.id);
      const saved = await store.putDag({ ...dag.spec, catchup: input.catchup }, await clusterShardCount());
      if (saved.created)
        await auditChange(store, ctx, { action: 'dag.catchup_changed', dagId: dag.id, details: { from: dag.spec.catchup, to: input.catchup, version: saved.version } });
      return saved;
    }),
  ),
});
