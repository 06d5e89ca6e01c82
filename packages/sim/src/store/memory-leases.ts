import { DeposedLeaderError, LIMITS, lendsAny, lendCheckWorkers, refusedLends, reservePoolWorkers, type WorkerId } from '@fenceline/core';
import { type Grant, type GrantedLease, type LeaderToken, type SweptJob } from '@fenceline/core/store';
import { date, dateOrNull, isId, type MemJob } from './memory-rows';
import type { MemoryTables } from './memory-tables';
import { LimitCheck, type MemoryResources } from './memory-resources';

/**
 * A leader's side of job leases, in memory: granting (rule 1: one step that raises the
 * fence and names the holder) and sweeping expired leases (rule 4: revocation raises the
 * fence again).
 */
export class MemoryLeases {
  constructor(
    private readonly tables: MemoryTables,
    private readonly resources: MemoryResources,
  ) {}

  async grantLeasesMany(items: { token: LeaderToken; grants: Grant[] }[], ttlMs: number): Promise<(GrantedLease[] | DeposedLeaderError)[]> {
    const out: (GrantedLease[] | DeposedLeaderError)[] = [];
    // Limited jobs are granted only on the path that checks their units, one check for the whole batch.
    const limits = items.some((i) => i.grants.some((g) => g.limited === true)) ? new LimitCheck(this.tables, this.resources) : null;
    const refused = this.refusedLends(items);
    // Each item is one shard's grant, in order. Each is awaited, as it always was, so the
    // order of microtasks, and with it every simulator trace, stays as it was.
    for (const { token, grants } of items) {
      try {
        out.push(await this.grantIn(token, refused ? grants.filter((g) => !refused.has(g)) : grants, ttlMs, limits));
      } catch (err) {
        if (err instanceof DeposedLeaderError) out.push(err);
        else throw err;
      }
    }
    return out;
  }

  /**
   * The lent grants of a batch that would take the reserve, by the leases on record now
   * (fairshare/lend-check.ts); null for a batch without a lending check, which costs nothing.
   */
  private refusedLends(items: { grants: Grant[] }[]): Set<Grant> | null {
    const flat = items.flatMap((i) => i.grants);
    if (!lendsAny(flat)) return null;
    const wanted = new Set<string>(lendCheckWorkers(flat));
    const held = new Map<string, number>();
    const holders = new Set<string>();
    for (const id of this.tables.leased) {
      const job = this.tables.jobs.get(id);
      if (job?.state !== 'leased' || job.holder === null) continue;
      holders.add(job.holder);
      if (wanted.has(job.holder)) held.set(job.holder, (held.get(job.holder) ?? 0) + 1);
    }
    const refused = refusedLends(
      flat,
      (w) => held.get(w) ?? 0,
      (w) => this.tables.workerTable.slots(w),
      (check) => this.tables.workerTable.liveSlots(check.pool, this.tables.nowMs() - check.liveWindowMs, reservePoolWorkers(check, holders)),
    );
    return new Set([...refused].map((i) => flat[i]!));
  }

  /** One leader's grants (see grantLeasesMany). */
  private async grantIn(token: LeaderToken, grants: Grant[], ttlMs: number, limits: LimitCheck | null): Promise<GrantedLease[]> {
    const valid = grants.filter((g) => isId(g.jobId));
    if (valid.length === 0) return [];
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'grantLeases');
    const seen = new Set<string>();
    const out: GrantedLease[] = [];
    for (const g of valid) {
      // A job named twice in one batch is granted once, to the first grant that names it.
      if (seen.has(g.jobId)) continue;
      seen.add(g.jobId);
      const job = this.tables.jobs.get(g.jobId);
      if (!job || job.shard !== token.shard || !this.tables.rules.grantable(job, now)) continue;
      if (job.resources && (!limits || !limits.admits(job))) continue;
      // A lease is granted to the worker's current session (none if it never registered).
      const session = this.tables.workerTable.session(g.workerId);
      const lease = this.lease(job, g.workerId, session, ttlMs, now, token);
      limits?.hold(job, lease.fence);
      out.push(lease);
    }
    return out;
  }

  /** ready -> leased with fence + 1, attempt + 1, holder and expiry, in one step. */
  private lease(job: MemJob, workerId: WorkerId, session: string | null, ttlMs: number, now: number, token: LeaderToken): GrantedLease {
    job.state = 'leased';
    job.fence += 1;
    job.attempt += 1;
    job.holder = workerId;
    job.holderSession = session;
    job.leaseExpiresAtMs = now + ttlMs;
    job.leasedAtMs = now;
    job.renewed = false;
    job.nextAttemptAtMs = null;
    this.tables.indexLease(job);
    this.tables.emit({ op: 'job:granted', atMs: now, jobId: job.id, dagId: job.dagId, workerId, fence: job.fence, expiresAtMs: now + ttlMs, token });
    return {
      jobId: job.id,
      runId: job.runId,
      dagId: job.dagId,
      taskId: job.taskId,
      workerId: job.holder,
      fence: job.fence,
      attempt: job.attempt,
      leasedAt: date(now),
      leaseExpiresAt: date(now + ttlMs),
    };
  }

  async sweepExpired(token: LeaderToken, limit: number): Promise<SweptJob[]> {
    const now = this.tables.nowMs();
    if (!this.tables.rules.leads(token, now)) throw this.tables.deposed(token, 'sweepExpired');
    const max = Math.max(1, Math.floor(limit));
    const heap = this.tables.leaseIndex.get(token.shard);
    const expired: MemJob[] = [];
    if (heap) {
      this.tables.pruneLeases(heap);
      heap.walkWhile((e) => {
        if (e.atMs > now) return false;
        const job = this.tables.jobs.get(e.id);
        if (job && job.state === 'leased' && job.leaseExpiresAtMs === e.atMs && !expired.includes(job)) expired.push(job);
        return true;
      });
    }
    expired.sort((a, b) => a.leaseExpiresAtMs! - b.leaseExpiresAtMs! || a.num - b.num);
    const swept: SweptJob[] = [];
    for (const job of expired.slice(0, max).sort((a, b) => a.num - b.num)) {
      const holder = job.holder;
      // A lease never renewed was most likely never delivered; see LIMITS.maxLostLeases.
      const lost = !job.renewed && job.lostLeases < LIMITS.maxLostLeases;
      const retry = lost || job.attempt < job.maxAttempts;
      const renewed = job.renewed;
      job.nextAttemptAtMs = lost ? null : retry ? now + this.tables.backoffMs(job) : null;
      if (lost) {
        job.attempt--;
        job.lostLeases++;
      }
      job.renewed = false;
      job.fence = this.tables.rules.revokedFence(job.fence);
      job.holder = null;
      job.holderSession = null;
      job.leaseExpiresAtMs = null;
      this.tables.leased.delete(job.id);
      job.state = retry ? 'ready' : 'failed';
      if (retry) job.readyAtMs = now;
      job.endedAtMs = retry ? null : now;
      job.lastError = `lease of ${holder ?? 'unknown worker'} expired${lost ? ' before its holder renewed it; the attempt is not counted' : ''}`;
      this.tables.emit({ op: 'job:swept', atMs: now, jobId: job.id, dagId: job.dagId, fence: job.fence, state: retry ? 'ready' : 'failed', token });
      swept.push({
        jobId: job.id,
        runId: job.runId,
        dagId: job.dagId,
        previousHolder: holder,
        fence: job.fence,
        state: retry ? 'ready' : 'failed',
        nextAttemptAt: dateOrNull(job.nextAttemptAtMs),
        renewed,
        attemptCounted: !lost,
      });
    }
    return swept;
  }
}
