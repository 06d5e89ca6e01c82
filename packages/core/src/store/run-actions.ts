import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { JobRow, RunRow, JobState } from '../model';
import type { StoreTime } from './shared';

/**
 * Operator actions on runs (cancel, clear, retry, mark): the console, the CLI and the API
 * request them, the shard's leader applies them. A request is stored before anything
 * changes, so a leader that crashes before applying it leaves it to the next one.
 */
export interface RunActionStore extends StoreTime {
  /**
   * Checks the request against its run's DAG version (checkRunActionRequest), stores it
   * as pending and tells the shard's leader. With a `requestKey`, the same request for the
   * run sent again by the key's owner stores nothing and returns the first, marked
   * `repeated`; the key sent by its owner with another request throws KeyReusedError.
   * Throws NotFoundError for a
   * run that does not exist, InvalidInputError naming each bad field.
   */
  requestRunAction(req: RunActionRequest): Promise<RequestedRunAction>;
  getRunAction(actionId: string): Promise<RunActionRow>;
  /** The run's actions, newest first. */
  listRunActions(runId: RunId): Promise<RunActionRow[]>;
}

/**
 * What an operator may do to a run (docs/architecture.md, "Operator actions"):
 * - cancel: the named tasks (and, with `downstream`, everything below them), or with no
 *   tasks the whole run, end cancelled; a running job's lease is revoked (fence + 1);
 * - clear: the named finished tasks (and, with `downstream`, the finished tasks below
 *   them) go back to waiting with fresh attempts and higher fences;
 * - retry_failed: clears every failed and upstream_failed task of the run;
 * - mark_success / mark_failed: the named tasks end as if they had run so, with a reason.
 */
export type RunActionKind = 'cancel' | 'clear' | 'retry_failed' | 'mark_success' | 'mark_failed';

/** An operator's request, as the console, the CLI or a script sends it (CatalogueStore.requestRunAction). */
export interface RunActionRequest {
  runId: RunId;
  kind: RunActionKind;
  /** The tasks acted on; empty means the whole run (cancel and retry_failed only). */
  taskIds?: string[];
  downstream?: boolean;
  /** Why, in the operator's words; required for mark_success and mark_failed. */
  reason?: string | null;
  /** Who asked (a user name, `cli`), for the event log. */
  requestedBy: string;
  /** As for triggers: the same request for the run sent again by its owner with the key returns the first one. */
  requestKey?: string;
  requestOwner?: string;
  requestFingerprint?: string;
}

/** A stored request and, once its shard's leader applied it, what it changed. */
export interface RunActionRow {
  id: string;
  runId: RunId;
  dagId: DagId;
  shard: number;
  kind: RunActionKind;
  taskIds: string[];
  downstream: boolean;
  reason: string | null;
  requestedBy: string;
  state: 'pending' | 'applied';
  createdAt: Date;
  appliedAt: Date | null;
  /** What the leader did: the jobs it changed, by task, and the run's state after. */
  result: RunActionResult | null;
}

export interface RunActionResult {
  changed: { taskId: string; from: JobState; to: JobState }[];
  runState: RunRow['state'];
  /** Why nothing changed, when nothing did ("the run had already ended"). */
  note?: string;
}

/** A stored run action; `repeated` when a request key made the request a repeat that stored nothing. */
export type RequestedRunAction = RunActionRow & { repeated?: true };

/** One job a leader's plan moves, from the state it read to the state it writes. */
export interface JobChange {
  jobId: JobId;
  taskId: string;
  from: JobState;
  to: 'waiting' | 'succeeded' | 'failed' | 'upstream_failed' | 'cancelled';
}

/** A leader's write of an action (LeaderStore.applyRunAction). */
export interface RunActionWrite {
  actionId: string;
  runId: RunId;
  changes: JobChange[];
  /** cancelled ends the run; running reopens a finished one; null leaves it to the leader's finish step. */
  runState: 'cancelled' | 'running' | null;
  /** The error text written on jobs an operator ended (cancelled, marked failed). */
  note: string;
  result: RunActionResult;
}

/**
 * What the write did: `conflict` when a job was no longer in the state the plan read (a
 * result landed in between; the leader plans again), `done` when the action had been
 * applied already (by a previous leader), else the run and its jobs after the write and
 * the leases it revoked.
 */
export type RunActionOutcome =
  | { kind: 'conflict' }
  | { kind: 'done'; action: RunActionRow }
  | { kind: 'applied'; action: RunActionRow; run: RunRow; jobs: JobRow[]; revoked: { jobId: JobId; fence: number; holder: WorkerId | null }[] };
