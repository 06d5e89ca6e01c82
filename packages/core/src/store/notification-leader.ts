import type { RunId } from '../ids';
import type { RunEnd } from '../model';
import type { DeliveryOutcome, DeadlineCheck, DueNotification, NotificationEventItem, NotificationRow, NotificationWatch } from '../notify/notifications';
import type { LeaderToken } from './shared';

/**
 * What a shard's leader does with notifications, each under its token's lead check
 * (DeposedLeaderError otherwise): it queues them when it sees an event, claims the due
 * ones and records how each delivery went.
 */
export interface NotificationLeaderStore {
  /**
   * Queues one pending notification per event and matching rule (the rule's DAG, or a
   * rule for every DAG), in the token's shard, keyed `dedupeKeyOf(event, ruleId)` with ON
   * CONFLICT DO NOTHING, so an event seen twice (a retry, two leaders) is queued once.
   * Returns the notifications it created.
   */
  enqueueNotifications(token: LeaderToken, items: NotificationEventItem[]): Promise<NotificationRow[]>;
  /**
   * Claims up to `limit` pending notifications of the shard whose next attempt is due by
   * the store's clock and whose channel still exists: claimed_epoch = the token's epoch
   * and next_attempt_at moved NOTIFY_LIMITS.claimMs on, so a delivery in flight is not
   * claimed again by the same leader. A claim of an earlier epoch counts as due at once:
   * that leader was deposed, and its delivery may never be recorded. In id order.
   */
  dueNotifications(token: LeaderToken, limit: number): Promise<DueNotification[]>;
  /**
   * Records a delivery of a pending notification of the shard: delivered (claimed_epoch the
   * token's); or failed, the claim ended (claimed_epoch null),
   * attempts + 1 and due again after notificationBackoffMs(attempts), or dead once
   * attempts reach NOTIFY_LIMITS.maxAttempts. A notification no longer pending (delivered
   * or dead) is never changed again: null then, as for one that does not exist.
   */
  recordDelivery(token: LeaderToken, notificationId: string, outcome: DeliveryOutcome): Promise<NotificationRow | null>;
  /**
   * Queues run_failed, run_recovered and task_failed for the shard's runs and jobs that
   * ended within NOTIFY_LIMITS.catchUpMs (a succeeded run recovered when its DAG's previous
   * ended run failed; a job failed for good), for the rules that existed when each ended,
   * with the subjects and payloads the live path uses: a new leader calls it, since its
   * predecessor may have finished a run and died before queueing.
   * Returns the notifications it created (none for one queued already).
   */
  catchUpNotifications(token: LeaderToken): Promise<NotificationRow[]>;
  /**
   * The deadline_missed rules, the scheduled DAGs of these shards they cover (every
   * scheduled DAG when a rule names none), and whether any cluster rule exists, with the
   * store's clock: one read per check for all the shards a node leads.
   */
  notificationWatch(shards: number[]): Promise<NotificationWatch>;
  /**
   * Queues deadline_missed for each check whose deadline (scheduledAt + the rule's
   * afterSeconds) has passed by the store's clock, is not before the rule was created nor
   * the slot before the DAG was, and that no run of the DAG for that slot met: only a run
   * that succeeded by the deadline meets it. The DAG must be in the token's shard. Keyed
   * `deadline_missed:<dagId>@<slot ISO>:<ruleId>`, payload { dagId, scheduledAt,
   * afterSeconds, runId, state } (the slot's run, or nulls when none was created). Under the
   * lead check; returns the notifications it created.
   */
  enqueueMissedDeadlines(token: LeaderToken, checks: DeadlineCheck[]): Promise<NotificationRow[]>;
  /**
   * The cluster check, made by one watcher (the node leading the lowest led shard; two
   * watchers across a failover make one notification by the key): queues, in the token's
   * shard, shard_leaderless for each shard whose
   * lease has been out (or that was never led since the cluster began) for longer than a
   * rule's afterSeconds, keyed by the shard and the epoch it was left at, and pool_no_worker
   * for each known pool (a worker seen within NOTIFY_LIMITS.poolLookbackMs) whose workers
   * were all last seen more than workerLiveWindowMs + afterSeconds ago, keyed by the pool and
   * its last worker's last_seen, and for each pool a rule names (or, while a rule watches
   * every pool, a task of a DAG's current version names) with no worker seen in that time,
   * from when it was first named, keyed `none`. Under the lead check; returns the
   * notifications it created.
   */
  enqueueClusterNotifications(token: LeaderToken, options: { workerLiveWindowMs: number }): Promise<NotificationRow[]>;
  /**
   * For each run, the state of its DAG's latest ended run scheduled before it (what a
   * recovery is judged by), read in one statement for the batch; runs with none are left out.
   * With watchedOnly, so are the runs of DAGs no run_recovered rule watches (neither a rule
   * of the DAG nor one of every DAG), and while no such rule exists the read scans nothing.
   */
  previousRunEnds(runIds: readonly RunId[], options?: { watchedOnly?: boolean }): Promise<Map<RunId, RunEnd>>;
}
