import type { BackfillId, DagId, JobId, RunId } from '../ids';
import type { RunParams } from '../dag/params';

/** Notices between processes (pg_notify in SQL): what a shard leader should react to at once. */
export interface NoticeStore {
  /** Publishes a notice to every subscribed process. */
  notify(notice: StoreNotice): Promise<void>;
  /** Receives notices published by any process; returns an unsubscribe function. */
  subscribe(listener: (notice: StoreNotice) => void): Promise<() => Promise<void>>;
}

/** Something another process did that a shard leader should react to. */
export type StoreNotice =
  | {
      kind: 'run-queued';
      shard: number;
      runId: RunId;
      /** The queued run's facts, so the leader need not read the run back (older senders omit them). */
      dagId?: DagId;
      dagVersion?: number;
      scheduledAt?: string;
      /** The run's resolved parameters (older senders omit them, and the leader reads the run back). */
      params?: RunParams;
    }
  | {
      kind: 'job-ended';
      shard: number;
      jobId: JobId;
      /** Every job of the shard that ended, jobId included, when one notice tells of several (older senders send jobId alone). */
      jobIds?: JobId[];
    }
  | {
      /** An operator revoked a worker credential: every node forgets it at once. */
      kind: 'credential-revoked';
      credentialId: string;
    }
  | { kind: 'dag-changed'; shard: number; dagId: DagId }
  | {
      /** An operator asked for an action on a run of the shard (CatalogueStore.requestRunAction). */
      kind: 'run-action';
      shard: number;
      actionId: string;
      runId: RunId;
    }
  /** A backfill was created or cancelled: its shard's leader advances or settles it at once. */
  | { kind: 'backfill-changed'; shard: number; backfillId: BackfillId };
