import { jobStateWord, parseBackfillId, parseDagId, type DagId } from '@fenceline/core';
import { type RunActionRow } from '@fenceline/core/store';
import type { RouteHandler } from './handler';
import { routeHandler, type Endpoint } from './handler';
import { attemptHistory } from '@fenceline/db/console';
import { runIdFromUrl } from '../url-ids';
import * as b from './backfill-schemas';
import * as n from './notification-schemas';
import * as s from './schemas';

/**
 * Every endpoint of the HTTP API, in the order the OpenAPI document lists them. Each calls
 * the console procedure of the same change (so role checks, store calls and audit entries
 * are the console's own) or, for a run with its jobs, the store reads the console's run
 * page makes.
 */
function endpoint<P, Q, B>(e: Endpoint<P, Q, B>): Endpoint<P, Q, B> & { handler: RouteHandler } {
  return { ...e, handler: routeHandler(e) };
}

export const listDags = endpoint({
  method: 'GET',
  path: '/dags',
  operationId: 'listDags',
  summary: 'List DAGs, by id or next run, a page at a time',
  role: 'viewer',
  query: s.dagListQuery,
  answer: { status: 200, schema: s.dagListAnswer, description: 'A page of DAGs and how many match' },
  run: async ({ caller, query }) => ({ status: 200, body: await caller.dags.list(query) }),
});

export const getDag = endpoint({
  method: 'GET',
  path: '/dags/{id}',
  operationId: 'getDag',
  summary: 'One DAG with every version of its spec, newest first',
  role: 'viewer',
  params: s.dagIdPath,
  answer: { status: 200, schema: s.dagAnswer, description: 'The DAG and its versions' },
  run: async ({ caller, params }) => {
    const { dag, versions } = await caller.dags.get({ id: params.id });
    return { status: 200, body: { dag, versions } };
  },
});

export const applyDag = endpoint({
  method: 'POST',
  path: '/dags',
  operationId: 'applyDag',
  summary:
    'Store a DAG spec: a changed spec becomes a new version, an unchanged one changes nothing; with an Idempotency-Key, a repeated request stores nothing and returns the first answer',
  role: 'operator',
  body: s.applyBody,
  idempotent: true,
  answer: {
    status: 201,
    schema: s.appliedAnswer,
    description: 'The version stored',
    alsoStatus: { status: 200, description: 'The spec is unchanged: the current version, nothing stored' },
  },
  run: async ({ caller, body, idempotencyKey }) => {
    const saved = await caller.dags.save({ spec: body, requestKey: idempotencyKey });
    return { status: saved.created ? 201 : 200, body: saved };
  },
});

export const triggerDag = endpoint({
  method: 'POST',
  path: '/dags/{id}/trigger',
  operationId: 'triggerDag',
  summary: 'Queue a manual run now; with an Idempotency-Key, a repeated request queues nothing and returns the first run',
  role: 'operator',
  params: s.dagIdPath,
  body: s.triggerBody,
  idempotent: true,
  answer: { status: 201, schema: s.runRowSchema, description: 'The run queued (or, for a repeated key, the run the first request queued)' },
  run: async ({ caller, params, body, idempotencyKey }) => ({
    status: 201,
    body: await caller.dags.trigger({ id: params.id as DagId, params: body.params, requestKey: idempotencyKey }),
  }),
});

function pauseEndpoint(paused: boolean) {
  const verb = paused ? 'pause' : 'resume';
  return endpoint({
    method: 'POST',
    path: `/dags/{id}/${verb}`,
    operationId: `${verb}Dag`,
    summary: paused ? 'Stop scheduled runs of the DAG (running jobs go on)' : 'Restart scheduled runs of the DAG',
    role: 'operator',
    params: s.dagIdPath,
    answer: { status: 200, schema: s.dagRowSchema, description: 'The DAG as it is now' },
    run: async ({ caller, params }) => ({ status: 200, body: await caller.dags.setPaused({ id: params.id as DagId, paused }) }),
  });
}
export const pauseDag = pauseEndpoint(true);
export const resumeDag = pauseEndpoint(false);

export const listRuns = endpoint({
  method: 'GET',
  path: '/runs',
  operationId: 'listRuns',
  summary: 'Runs of every DAG (or one) by scheduled time, filtered, a page at a time by keyset cursor',
  role: 'viewer',
  query: s.runListQuery,
  answer: { status: 200, schema: s.runPageAnswer, description: 'A page of runs, with the cursors of the pages after and before it' },
  run: async ({ caller, query }) => {
    const { rows, next, previous } = await caller.runs.list(query);
    return { status: 200, body: { rows, next, previous } };
  },
});

export const getRun = endpoint({
  method: 'GET',
  path: '/runs/{id}',
  operationId: 'getRun',
  summary: "One run with its jobs, each with its accepted result's outcome and fence",
  role: 'viewer',
  params: s.runIdPath,
  answer: { status: 200, schema: s.runAnswer, description: 'The run and its jobs' },
  run: async ({ store, params }) => {
    const runId = runIdFromUrl(params.id);
    const [run, jobs, results] = await Promise.all([store.getRun(runId), store.listJobs(runId), store.listRunResults(runId)]);
    // Only the outcome, fence and effect outcomes of each result: its output and logs have their own reads, and may be large.
    const byJob = new Map(results.map((r) => [r.jobId, r]));
    const history = await attemptHistory(store.db, runId, jobs);
    const withResults = jobs.map((j) => {
      const r = byJob.get(j.id);
      const h = history.get(j.id);
      return {
        ...j,
        state: jobStateWord(j.state),
        history: h ? { seen: h.seen, lastClear: h.lastClear && { kind: h.lastClear.kind, by: h.lastClear.by, at: h.lastClear.at, reason: h.lastClear.reason } } : undefined,
        result: r ? { outcome: r.outcome, fence: r.fence, effects: r.effects ?? [] } : null,
      };
    });
    return { status: 200, body: { run, jobs: withResults } };
  },
});

/** A run action as the API shows it: the jobs it changed in the words a user reads (a leased job is running). */
function actionAnswer(a: RunActionRow) {
  if (!a.result) return a;
  return { ...a, result: { ...a.result, changed: a.result.changed.map((c) => ({ ...c, from: jobStateWord(c.from), to: jobStateWord(c.to) })) } };
}

export const requestRunAction = endpoint({
  method: 'POST',
  path: '/runs/{id}/actions',
  operationId: 'requestRunAction',
  summary: "Ask for a run action (cancel, clear, retry from failure, mark); the shard's leader applies it",
  role: 'operator',
  params: s.runIdPath,
  body: s.runActionBody,
  idempotent: true,
  answer: { status: 202, schema: s.runActionSchema, description: 'The stored request; poll /actions/{id} until it is applied' },
  run: async ({ caller, params, body, idempotencyKey }) => ({
    status: 202,
    body: actionAnswer(await caller.runActions.request({ runId: params.id, ...body, requestKey: idempotencyKey })),
  }),
});

export const getRunAction = endpoint({
  method: 'GET',
  path: '/actions/{id}',
  operationId: 'getRunAction',
  summary: 'One run action: pending, or applied with what it changed',
  role: 'viewer',
  params: s.actionIdPath,
  answer: { status: 200, schema: s.runActionSchema, description: 'The run action' },
  run: async ({ caller, params }) => ({ status: 200, body: actionAnswer(await caller.runActions.get({ actionId: params.id })) }),
});

export const listBackfills = endpoint({
  method: 'GET',
  path: '/backfills',
  operationId: 'listBackfills',
  summary: 'Backfills of every DAG (or one), newest first, each with its progress',
  role: 'viewer',
  query: b.backfillListQuery,
  answer: { status: 200, schema: b.backfillListAnswer, description: 'The backfills' },
  run: async ({ store, query }) => {
    const dagId = query.dag === undefined ? undefined : parseDagId(query.dag, 'dag');
    return { status: 200, body: { backfills: await store.listBackfills({ dagId, limit: query.limit ?? 20 }) } };
  },
});

export const createBackfill = endpoint({
  method: 'POST',
  path: '/backfills',
  operationId: 'createBackfill',
  summary:
    "Backfill a DAG's schedule slots in [from, to): its shard's leader creates one run per slot, at most maxActiveRuns unfinished at once; with an Idempotency-Key, a repeated request starts nothing and returns the first backfill",
  role: 'operator',
  body: b.backfillBody,
  bodyRequired: true,
  bodyNamesStored: true,
  idempotent: true,
  answer: {
    status: 201,
    schema: b.backfillRowSchema,
    description: 'The backfill, running; follow it with GET /backfills/{id}',
    alsoStatus: { status: 200, description: 'A repeated Idempotency-Key: the backfill the first request started (repeated: true), nothing written' },
  },
  run: async ({ caller, body, idempotencyKey }) => {
    const started = await caller.backfills.create({ ...body, dagId: parseDagId(body.dagId, 'dagId'), requestKey: idempotencyKey });
    return { status: started.repeated ? 200 : 201, body: started };
  },
});

export const getBackfill = endpoint({
  method: 'GET',
  path: '/backfills/{id}',
  operationId: 'getBackfill',
  summary: "One backfill's progress: slots created, skipped and finished, runs unfinished, and its state",
  role: 'viewer',
  params: b.backfillIdPath,
  answer: { status: 200, schema: b.backfillRowSchema, description: 'The backfill' },
  run: async ({ store, params }) => ({ status: 200, body: await store.getBackfill(parseBackfillId(params.id, 'id')) }),
});

export const cancelBackfill = endpoint({
  method: 'POST',
  path: '/backfills/{id}/cancel',
  operationId: 'cancelBackfill',
  summary: 'Stop a backfill: it creates no more runs and its queued runs end cancelled; one that already ended is answered as it is',
  role: 'operator',
  params: b.backfillIdPath,
  answer: { status: 200, schema: b.backfillRowSchema, description: 'The backfill as it is now' },
  run: async ({ caller, params }) => ({ status: 200, body: await caller.backfills.cancel({ id: parseBackfillId(params.id, 'id') }) }),
});

export const listLimits = endpoint({
  method: 'GET',
  path: '/limits',
  operationId: 'listLimits',
  summary: 'Every resource limit with its capacity, the units live leases hold, and the ready jobs waiting for it',
  role: 'viewer',
  answer: { status: 200, schema: s.limitListAnswer, description: 'The limits, by name' },
  run: async ({ caller }) => ({ status: 200, body: await caller.limits.list() }),
});

export const setLimit = endpoint({
  method: 'PUT',
  path: '/limits/{name}',
  operationId: 'setLimit',
  summary: 'Create a resource limit or change its capacity',
  role: 'operator',
  params: s.limitNamePath,
  body: s.limitBody,
  answer: { status: 200, schema: s.limitRowSchema, description: 'The limit as it is now, with its use' },
  run: async ({ caller, params, body }) => ({ status: 200, body: await caller.limits.set({ name: params.name, capacity: body.capacity }) }),
});

export const deleteLimit = endpoint({
  method: 'DELETE',
  path: '/limits/{name}',
  operationId: 'deleteLimit',
  summary: 'Delete a resource limit; jobs that consume it wait until it exists again',
  role: 'operator',
  params: s.limitNamePath,
  answer: { status: 200, schema: s.limitDeletedAnswer, description: 'The limit was deleted' },
  run: async ({ caller, params }) => ({ status: 200, body: await caller.limits.delete({ name: params.name }) }),
});

export const listNotificationChannels = endpoint({
  method: 'GET',
  path: '/notifications/channels',
  operationId: 'listNotificationChannels',
  summary: 'Every notification channel, by name, its URL masked and its secret shown only as set or not',
  role: 'viewer',
  answer: { status: 200, schema: n.channelListAnswer, description: 'The channels' },
  run: async ({ caller }) => ({ status: 200, body: { channels: await caller.notifications.channels() } }),
});

// Channels need an admin: a channel holds a secret and decides which host learns of runs (routers/notifications.ts).
export const createNotificationChannel = endpoint({
  method: 'POST',
  path: '/notifications/channels',
  operationId: 'createNotificationChannel',
  summary: 'Add a channel that notifications are POSTed to, signed with its secret if it has one',
  role: 'admin',
  body: n.channelBody,
  bodyRequired: true,
  answer: { status: 201, schema: n.channelRowSchema, description: 'The channel, its URL masked' },
  run: async ({ caller, body }) => ({ status: 201, body: await caller.notifications.createChannel(body) }),
});

export const deleteNotificationChannel = endpoint({
  method: 'DELETE',
  path: '/notifications/channels/{id}',
  operationId: 'deleteNotificationChannel',
  summary: 'Delete a channel and its rules; its notifications stay, and are not sent again',
  role: 'admin',
  params: n.channelIdPath,
  answer: { status: 200, schema: n.deletedAnswer, description: 'The channel was deleted' },
  run: async ({ caller, params }) => ({ status: 200, body: await caller.notifications.deleteChannel({ id: params.id }) }),
});

export const listNotificationRules = endpoint({
  method: 'GET',
  path: '/notifications/rules',
  operationId: 'listNotificationRules',
  summary: 'Every notification rule: which event of which DAG (or of every DAG) goes to which channel',
  role: 'viewer',
  answer: { status: 200, schema: n.ruleListAnswer, description: 'The rules, oldest first' },
  run: async ({ caller }) => ({ status: 200, body: { rules: await caller.notifications.rules() } }),
});

export const createNotificationRule = endpoint({
  method: 'POST',
  path: '/notifications/rules',
  operationId: 'createNotificationRule',
  summary: 'Send an event to a channel: a timed event needs afterSeconds, a cluster event names no DAG, pool is for pool_no_worker only',
  role: 'operator',
  body: n.ruleBody,
  bodyRequired: true,
  bodyNamesStored: true,
  answer: { status: 201, schema: n.ruleRowSchema, description: 'The rule' },
  run: async ({ caller, body }) => ({ status: 201, body: await caller.notifications.createRule(body) }),
});

export const deleteNotificationRule = endpoint({
  method: 'DELETE',
  path: '/notifications/rules/{id}',
  operationId: 'deleteNotificationRule',
  summary: 'Delete a rule; what it queued already is still sent',
  role: 'operator',
  params: n.ruleIdPath,
  answer: { status: 200, schema: n.deletedAnswer, description: 'The rule was deleted' },
  run: async ({ caller, params }) => ({ status: 200, body: await caller.notifications.deleteRule({ id: params.id }) }),
});

export const listNotifications = endpoint({
  method: 'GET',
  path: '/notifications',
  operationId: 'listNotifications',
  summary: 'Notifications newest first, with their state, attempts and last error; state=dead lists the dead letters',
  role: 'viewer',
  query: n.notificationListQuery,
  answer: { status: 200, schema: n.notificationListAnswer, description: 'The notifications' },
  run: async ({ caller, query }) => ({ status: 200, body: { notifications: await caller.notifications.list(query) } }),
});

export const retryNotification = endpoint({
  method: 'POST',
  path: '/notifications/{id}/retry',
  operationId: 'retryNotification',
  summary: 'Send a dead notification again: it is pending, due now, with its attempts reset; one that is not dead is refused',
  role: 'operator',
  params: n.notificationIdPath,
  answer: { status: 200, schema: n.notificationRowSchema, description: 'The notification, pending again' },
  run: async ({ caller, params }) => ({ status: 200, body: await caller.notifications.retry({ id: params.id }) }),
});

export const ENDPOINTS = [
  listDags,
  getDag,
  applyDag,
  triggerDag,
  pauseDag,
  resumeDag,
  listRuns,
  getRun,
  requestRunAction,
  getRunAction,
  listBackfills,
  createBackfill,
  getBackfill,
  cancelBackfill,
  listLimits,
  setLimit,
  deleteLimit,
  listNotificationChannels,
  createNotificationChannel,
  deleteNotificationChannel,
  listNotificationRules,
  createNotificationRule,
  deleteNotificationRule,
  listNotifications,
  retryNotification,
] as const;
