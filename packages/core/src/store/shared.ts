import type { JobId, WorkerId } from '../ids';

/** The store's clock: every role reads it, since every rule is judged by store time. */
export interface StoreTime {
  now(): Promise<Date>;
}

/** Proof of shard leadership, carried by every leader write. */
export interface LeaderToken {
  shard: number;
  nodeId: string;
  epoch: number;
}

/** Proof of a job lease, carried by every worker write. */
export interface LeaseRef {
  jobId: JobId;
  fence: number;
  workerId: WorkerId;
  /**
   * The session key the writer presents (the node passes the hash of the worker's session
   * secret). A write lands only if the lease was granted to this session and the session
   * is still the worker's current one. `null` is a write by the node itself (handing back
   * a lease it granted but never delivered) or by a test driving the store directly: no
   * worker request can carry it, since the scheduler's API requires a session string.
   */
  session: string | null;
}

/** The items one leader writes in a multi-shard statement, under its own token. */
export interface LeaderGroup<T> {
  token: LeaderToken;
  items: T[];
}
