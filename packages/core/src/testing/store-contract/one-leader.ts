import { DeposedLeaderError } from '../../errors';
import type { JobId, RunId } from '../../ids';
import type { JobRow, RunRow } from '../../model';
import type { CompleteItem, CreatedRun, Grant, GrantedLease, LeaderStore, LeaderToken, LeaseRef, NewJob, ScheduledRunsItem, WorkerProtocolStore } from '../../store';

/*
 * One shard's step through the store's batched writes, for tests that drive a single
 * leader or a single lease. Each sends one group (or one item) through the form
 * production uses and throws what that group was refused with, so a test still reads as
 * the step it takes and still sees the refusal a deposed leader or a stale fence gets.
 */

/** The one group's result, or its DeposedLeaderError thrown. */
function onlyGroup<T>(out: (T | DeposedLeaderError)[]): T {
  const first = out[0];
  if (first instanceof DeposedLeaderError) throw first;
  if (first === undefined) throw new Error('the store answered a one-group write with no group');
  return first;
}

/** Run creation for one due DAG: the runs created ([] when next_run_at had moved). */
export async function createScheduledRuns(
  store: LeaderStore,
  token: LeaderToken,
  dagId: string,
  expectedNextRunAt: Date,
  slots: Date[],
  nextRunAt: Date | null,
): Promise<RunRow[]> {
  return (await createScheduledRunsMany(store, token, [{ dagId, expectedNextRunAt, slots, nextRunAt }]))[0]!;
}

/** Run creation for many due DAGs of one shard: the runs created per item. */
export async function createScheduledRunsMany(store: LeaderStore, token: LeaderToken, items: ScheduledRunsItem[]): Promise<CreatedRun[][]> {
  return onlyGroup(await store.createScheduledRunsAcross([{ token, items }]));
}

/** queued -> running for one run: its jobs ([] if it was not queued). */
export async function startRun(store: LeaderStore, token: LeaderToken, runId: RunId, jobs: NewJob[]): Promise<JobRow[]> {
  return (await startRuns(store, token, [{ runId, jobs }]))[0]!;
}

/** queued -> running for many runs of one shard: the jobs per item. */
export async function startRuns(store: LeaderStore, token: LeaderToken, items: { runId: RunId; jobs: NewJob[] }[]): Promise<JobRow[][]> {
  return onlyGroup(await store.startRunsAcross([{ token, items }]));
}

/** waiting -> ready: the ids moved. */
export async function promoteJobs(store: LeaderStore, token: LeaderToken, jobIds: JobId[]): Promise<JobId[]> {
  return onlyGroup(await store.promoteJobsAcross([{ token, items: jobIds }]));
}

/** waiting | ready -> upstream_failed: the ids moved. */
export async function markUpstreamFailed(store: LeaderStore, token: LeaderToken, jobIds: JobId[]): Promise<JobId[]> {
  return onlyGroup(await store.markUpstreamFailedAcross([{ token, items: jobIds }]));
}

/** Finishes one run: whether it moved. */
export async function finishRun(store: LeaderStore, token: LeaderToken, runId: RunId, state: 'succeeded' | 'failed'): Promise<boolean> {
  return (await finishRuns(store, token, [{ runId, state }]))[0]!;
}

/** Finishes many runs of one shard: per item whether it moved. */
export async function finishRuns(store: LeaderStore, token: LeaderToken, items: { runId: RunId; state: 'succeeded' | 'failed' | 'cancelled' }[]): Promise<boolean[]> {
  return onlyGroup(await store.finishRunsAcross([{ token, items }]));
}

/** One leader's grants: the leases granted. */
export async function grantLeases(store: LeaderStore, token: LeaderToken, grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
  return onlyGroup(await store.grantLeasesMany([{ token, grants }], ttlMs));
}

/** Completes one lease: the job's row, or the typed refusal thrown. */
export async function completeJob(store: WorkerProtocolStore, ref: LeaseRef, result: Omit<CompleteItem, 'ref'>): Promise<JobRow> {
  const [outcome] = await store.completeJobs([{ ref, ...result }]);
  if (!outcome) throw new Error('the store answered a one-item completion with no outcome');
  if (!outcome.ok) throw outcome.error;
  return outcome.row;
}
