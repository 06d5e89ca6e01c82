import type { DagId, JobId, RunId, WorkerId } from '../ids';
import type { JobState, RunRow } from '../model';
import type { GrantedLease, LeaderToken, NewEvent, RunActionRow, SweptJob } from '../store';

/** The run an event is about: its id and its DAG. */
export interface RunRef {
  id: RunId;
  dagId: DagId;
}

/**
 * The lifecycle events of a shard leader's runs, of their jobs' leases and of its
 * backfills, stamped with its shard and epoch, and emitted as they are built. Each part of
 * the leader says what happened here rather than assembling the event: the fields every
 * event of a kind carries, and their order, are written once.
 */
export class RunEvents {
  constructor(
    private readonly token: LeaderToken,
    private readonly emit: (event: NewEvent) => void,
  ) {}

  /** A run was created for a slot, a trigger or a backfill (`backfillId`). */
  created(run: RunRef & Pick<RunRow, 'scheduledAt' | 'trigger'>, backfillId?: string): void {
    const data: Record<string, unknown> = { scheduledAt: run.scheduledAt.toISOString(), trigger: run.trigger };
    if (backfillId !== undefined) data.backfillId = backfillId;
    this.emit({ type: 'run:created', shard: this.token.shard, dagId: run.dagId, runId: run.id, epoch: this.token.epoch, data });
  }

  /** A tick skipped slots of a DAG under its catch-up policy, creating no run for them. */
  slotsSkipped(dagId: DagId, skippedSlots: number, policy: string): void {
    this.emit({ type: 'run:created', shard: this.token.shard, dagId, data: { skippedSlots, policy } });
  }

  /** A run started, with its jobs inserted. */
  started(run: RunRef, jobs: number): void {
    this.emit({ type: 'run:started', shard: this.token.shard, dagId: run.dagId, runId: run.id, epoch: this.token.epoch, data: { jobs } });
  }

  /** A run ended in `state`; `more` says why or by what (a reason, a backfill's id). */
  finished(run: RunRef, state: RunRow['state'], more?: { reason?: string; backfillId?: string }): void {
    this.emit({ type: 'run:finished', shard: this.token.shard, dagId: run.dagId, runId: run.id, epoch: this.token.epoch, data: { state, ...more } });
  }

  /** An operator action was applied to a run, with what it did. */
  actionApplied(run: RunRef, action: RunActionRow, result: RunActionRow['result']): void {
    this.emit({
      type: 'run:action',
      shard: this.token.shard,
      dagId: run.dagId,
      runId: run.id,
      epoch: this.token.epoch,
      data: { actionId: action.id, kind: action.kind, by: action.requestedBy, reason: action.reason, ...result },
    });
  }

  /** An operator action moved one job of a run; the event's type says to what. */
  jobActed(run: RunRef, job: { id: JobId; fence: number } | undefined, change: { from: JobState; to: JobState }, action: RunActionRow): void {
    const { from, to } = change;
    this.emit({
      type: `job:${to === 'waiting' ? 'cleared' : to === 'cancelled' ? 'cancelled' : to === 'upstream_failed' ? 'upstream_failed' : 'marked'}`,
      shard: this.token.shard,
      dagId: run.dagId,
      runId: run.id,
      jobId: job?.id ?? null,
      fence: job?.fence ?? null,
      epoch: this.token.epoch,
      data: { actionId: action.id, from, to, by: action.requestedBy, reason: action.reason },
    });
  }

  /** An operator action revoked a lease of one of the run's jobs, for `reason`. */
  leaseRevoked(run: RunRef, lease: { jobId: JobId; fence: number; holder: WorkerId | null }, reason: string, actionId: string): void {
    this.emit({
      type: 'lease:revoked',
      shard: this.token.shard,
      dagId: run.dagId,
      runId: run.id,
      jobId: lease.jobId,
      workerId: lease.holder,
      fence: lease.fence,
      epoch: this.token.epoch,
      data: { reason, actionId },
    });
  }

  /** A job was leased, at the store's time of the grant. */
  leaseGranted(job: { id: JobId; runId: RunId; dagId: DagId }, lease: GrantedLease): void {
    this.emit({
      type: 'lease:granted',
      at: lease.leasedAt,
      shard: this.token.shard,
      dagId: job.dagId,
      runId: job.runId,
      jobId: job.id,
      workerId: lease.workerId,
      fence: lease.fence,
      epoch: this.token.epoch,
      data: { attempt: lease.attempt },
    });
  }

  /** A backfill of the DAG started, took a step, ended, or was settled after its cancel; `data` names it. */
  backfill(kind: 'started' | 'advanced' | 'done' | 'cancelled', dagId: DagId, data: { backfillId: string } & Record<string, unknown>): void {
    this.emit({ type: `backfill:${kind}`, shard: this.token.shard, dagId, epoch: this.token.epoch, data });
  }

  /** A sweep revoked an expired lease; `data` says what became of the job and why. */
  leaseExpired(swept: SweptJob, data: Record<string, unknown>): void {
    this.emit({
      type: 'lease:expired',
      shard: this.token.shard,
      dagId: swept.dagId,
      runId: swept.runId,
      jobId: swept.jobId,
      workerId: swept.previousHolder,
      fence: swept.fence,
      epoch: this.token.epoch,
      data,
    });
  }
}
