import { DeposedLeaderError } from '../errors';
import type { JobId } from '../ids';
import type { Grant, GrantedLease, LeaderStore, LeaderToken } from '../store';
import { unlessUnavailable } from '../unavailable';
import type { MemJob } from './job-index';
import type { LeaderParts } from './leader-parts';
import type { LeaderState } from './leader-state';

/**
 * A leader's grants of the leases a dispatch round planned: the jobs leave the ready
 * queues before the statement goes out, and those the store refused go back and are read
 * again.
 */
export class LeaseGrants {
  constructor(
    private readonly s: LeaderState,
    private readonly parts: Pick<LeaderParts, 'sync'>,
  ) {}

  /** Grants leases in one store statement and records them; returns what was granted. */
  async grant(grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
    const { s } = this;
    // Take the jobs out of the ready queues first, so a concurrent round cannot pick them again.
    const taken: MemJob[] = [];
    for (const g of grants) {
      const job = s.index.get(g.jobId);
      // While an operator action on its run is written, a job is not granted: the write is
      // conditional on the states it planned from, and a grant would only make it plan again.
      if (!job || job.state !== 'ready' || s.busy.isBusy(job.runId, 'acting')) continue;
      s.index.setState(job, 'leased');
      job.leasedAtMs = s.deps.clock.nowMs();
      s.busy.begin(job.id, 'granting');
      taken.push(job);
    }
    const takenIds = new Set(taken.map((t) => t.id));
    let granted: GrantedLease[];
    try {
      // A job that consumes resource limits is flagged, so the store grants it under the limits' lock.
      const toGrant = grants.filter((g) => takenIds.has(g.jobId)).map((g) => (s.index.get(g.jobId)?.resources ? { ...g, limited: true } : g));
      const grantLeases = s.deps.grantLeases ?? ((token, list, ttl) => grantAlone(s.deps.store, token, list, ttl));
      granted = (await s.guard(() => grantLeases(s.token, toGrant, ttlMs))) ?? [];
    } catch (err) {
      for (const job of taken) s.busy.end(job.id, 'granting');
      // We cannot know whether the statement landed (the connection may have died after the
      // commit). Keep counting the jobs as held, so the cap stays exact, until a re-read of
      // each says otherwise; reconciliation retries the re-read if the store is still away.
      for (const job of taken) job.leasedAtMs = 0;
      await this.parts.sync.resyncMany(taken.map((job) => job.id)).catch(unlessUnavailable(undefined));
      throw err;
    }
    for (const job of taken) s.busy.end(job.id, 'granting');
    const refused = this.recordGrants(taken, granted);
    if (refused.length > 0 && !s.deposed) await this.parts.sync.resyncMany(refused);
    // A later round re-plans the refused jobs (and arms a wake-up for any future backoff).
    if (refused.length > 0) s.deps.kick();
    return granted;
  }

  /** Marks the taken jobs the store granted as leased and puts the others back; returns those. */
  private recordGrants(taken: MemJob[], granted: GrantedLease[]): JobId[] {
    const { s } = this;
    const byId = new Map<string, GrantedLease>(granted.map((g) => [g.jobId, g]));
    const nowMs = s.deps.clock.nowMs();
    const refused: JobId[] = [];
    for (const job of taken) {
      const lease = byId.get(job.id);
      // A job whose run an action ended while the grant was out left the index with it.
      if (!s.index.has(job.id)) continue;
      if (lease) {
        s.index.setState(job, 'leased');
        job.fence = lease.fence;
        job.holder = lease.workerId;
        job.leasedAtMs = nowMs;
        const run = s.runs.get(job.runId);
        // The machine tracks dependencies; a lease it already knows of (after a repair) is not news.
        if (run?.machine.state(job.taskId) === 'ready') run.machine.onLeased(job.taskId);
        s.deps.traces?.attemptLeased(job, lease, s.shard);
        s.events.leaseGranted(job, lease);
      } else {
        // The store refused: the job changed under us, its backoff has not passed by the
        // store's clock, or we were deposed. Put it back and re-read it.
        s.index.setState(job, 'ready');
        refused.push(job.id);
      }
    }
    return refused;
  }
}

/** A leader's grant statement when no node joins it with others: the multi-leader form with one item. */
async function grantAlone(store: LeaderStore, token: LeaderToken, grants: Grant[], ttlMs: number): Promise<GrantedLease[]> {
  const [outcome] = await store.grantLeasesMany([{ token, grants }], ttlMs);
  if (outcome instanceof DeposedLeaderError) throw outcome;
  return outcome ?? [];
}
