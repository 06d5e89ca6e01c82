import { LIMITS } from '../limits';
import { unlessUnavailable } from '../unavailable';
import type { JobId } from '../ids';
import type { JobRow, JobState } from '../model';
import type { SweptJob } from '../store';
import type { LeaderParts } from './leader-parts';
import type { LeaderState } from './leader-state';
import { sweepReason } from './revocation';

/**
 * A leader's sweep of expired leases and its re-reads of the jobs its memory may be wrong
 * about; the rest of a reconciliation (repairing runs, taking up queued runs whose notice
 * was lost) is the ShardLeader's to run.
 */
export class LeaderSync {
  constructor(
    private readonly s: LeaderState,
    private readonly parts: Pick<LeaderParts, 'ends'>,
  ) {}

  /** Revokes expired leases of this shard (rule 4). */
  async sweep(limit: number): Promise<SweptJob[]> {
    const { s } = this;
    if (s.index.leasedCount() === 0) return [];
    const swept = (await s.guard(() => s.deps.store.sweepExpired(s.token, limit))) ?? [];
    for (const sj of swept) {
      const holderGone = s.deps.holderGone?.(sj.previousHolder) ?? false;
      const reason = sweepReason(sj, holderGone);
      s.events.leaseExpired(sj, { state: sj.state, attemptCounted: sj.attemptCounted, renewed: sj.renewed, holderGone, reason });
    }
    await this.parts.ends.jobsEnded(swept.map((sj) => ({ id: sj.jobId, state: sj.state, nextAttemptAt: sj.nextAttemptAt, fence: sj.fence })));
    return swept;
  }

  /**
   * Re-reads jobs the cache may be wrong about, together: the leases reconciliation
   * suspects (a node with thousands of five-minute jobs running used to send a query per
   * job each time), the jobs another node's notice says ended, and the jobs of a grant or
   * a promotion whose answer did not say what became of them. A job this leader changed while the read
   * was out is left alone: its row may predate that change, and whatever changed it
   * brought the cache up to date.
   */
  async resyncMany(jobIds: JobId[]): Promise<void> {
    const { s } = this;
    for (let i = 0; i < jobIds.length; i += LIMITS.maxJobsPerRead) {
      const asked = new Map<JobId, { state: JobState; fence: number }>();
      for (const id of jobIds.slice(i, i + LIMITS.maxJobsPerRead)) {
        const job = s.index.get(id);
        if (job && !s.busy.isBusy(id, 'granting')) asked.set(id, { state: job.state, fence: job.fence });
      }
      if (asked.size === 0) continue;
      // A store that is away leaves the cache as it is until the next reconciliation; any
      // other error of the read is a bug, and surfaces.
      const rows = await s.deps.store.getJobs([...asked.keys()]).catch(unlessUnavailable(null));
      for (const row of rows ?? []) {
        const job = s.index.get(row.id);
        const before = asked.get(row.id);
        if (job && before && job.state === before.state && job.fence === before.fence) await this.applyRead(row);
      }
    }
  }

  /** Brings the cached job in line with a row read from the store. */
  private async applyRead(row: JobRow): Promise<void> {
    const { s } = this;
    const job = s.index.get(row.id);
    // A grant that started while we read answers for itself.
    if (!job || s.busy.isBusy(row.id, 'granting')) return;
    if (row.state === 'leased') {
      job.leasedAtMs = s.deps.clock.nowMs();
      s.index.setState(job, 'leased');
      job.fence = row.fence;
      job.holder = row.holder;
      return;
    }
    if (row.state === job.state) return;
    await this.parts.ends.jobEnded(row);
  }
}
