import type { JobState, RunTrigger } from '@fenceline/core';
import type { LeaderToken } from '@fenceline/core/store';

/**
 * What the in-memory store did, one record per write that landed, emitted at the instant
 * of the write in store time. The invariant checker reads only these records and keeps
 * its own shadow of leases, fences and epochs from them, so a store that breaks a rule
 * is caught by what it does, not by what it says about itself.
 */
export type StoreWrite =
  | { op: 'shard:acquired'; atMs: number; shard: number; nodeId: string; epoch: number; expiresAtMs: number }
  | { op: 'shard:renewed'; atMs: number; shard: number; nodeId: string; epoch: number; expiresAtMs: number }
  | { op: 'shard:released'; atMs: number; shard: number; nodeId: string; epoch: number }
  | { op: 'dag:put'; atMs: number; dagId: string; shard: number; version: number; nextRunAtMs: number | null; paused: boolean }
  | { op: 'dag:paused'; atMs: number; dagId: string; paused: boolean }
  | { op: 'dag:next-run'; atMs: number; dagId: string; token: LeaderToken; nextRunAtMs: number | null }
  | { op: 'run:created'; atMs: number; runId: string; dagId: string; scheduledAtMs: number; trigger: RunTrigger; token: LeaderToken | null }
  | { op: 'run:cancelled'; atMs: number; runId: string; dagId: string; token: LeaderToken }
  | { op: 'backfill:created' | 'backfill:cancelled'; atMs: number; backfillId: string; dagId: string }
  | { op: 'backfill:advanced'; atMs: number; backfillId: string; dagId: string; token: LeaderToken; nextSlotAtMs: number | null }
  | { op: 'run:started'; atMs: number; runId: string; dagId: string; token: LeaderToken; jobIds: string[] }
  | { op: 'run:finished'; atMs: number; runId: string; dagId: string; token: LeaderToken; state: 'succeeded' | 'failed' | 'cancelled' }
  | { op: 'job:promoted' | 'job:upstream_failed' | 'job:skipped'; atMs: number; jobId: string; token: LeaderToken }
  | { op: 'job:granted'; atMs: number; jobId: string; dagId: string; workerId: string; fence: number; expiresAtMs: number; token: LeaderToken }
  | { op: 'job:swept'; atMs: number; jobId: string; dagId: string; fence: number; state: 'ready' | 'failed'; token: LeaderToken }
  | { op: 'job:renewed'; atMs: number; jobId: string; workerId: string; fence: number; expiresAtMs: number }
  | { op: 'job:completed' | 'job:failed' | 'job:retry'; atMs: number; jobId: string; dagId: string; workerId: string; fence: number }
  | { op: 'job:released'; atMs: number; jobId: string; dagId: string; workerId: string; fence: number; newFence: number }
  /** An operator action moved a job (cancelled, cleared back to waiting, marked); `fence` is the fence after it. */
  | { op: 'job:acted'; atMs: number; jobId: string; dagId: string; token: LeaderToken; from: JobState; to: JobState; fenceBefore: number; fence: number }
  /** An operator's clear reopened a finished run. */
  | { op: 'run:reopened'; atMs: number; runId: string; dagId: string; token: LeaderToken }
  | { op: 'result:written'; atMs: number; jobId: string; workerId: string; fence: number; outcome: 'succeeded' | 'failed' };

export type StoreObserver = (write: StoreWrite) => void;
