import { randomBytes } from 'node:crypto';
import type { JobId } from '@fenceline/core';
import type { RunReadStore } from '@fenceline/core/store';
import { schedulerClient, typedRefusal } from '@fenceline/worker';

/**
 * A worker gone bad: it takes leases it can see in the store and writes to them with a
 * forged fence (higher than issued) or replays an old one, impersonating the holder; and
 * it writes with the current fence and the holder's id but its own session, as a worker
 * that learned both would. Every such write must be refused; one accepted write is a
 * safety violation. The answers all say LEASE_LOST; the reasons are in the event log.
 */
export class RogueWorker {
  readonly refused: Record<string, number> = {};
  readonly accepted: string[] = [];
  private readonly seen: { jobId: JobId; fence: number; workerId: string }[] = [];
  /**
   * The rogue's own session secret. It never registers: a registered worker would count in
   * the pool the fair-share cap is drawn from, and the soak audits that cap against the
   * pool it started. A session the lease was not granted to is refused all the same.
   */
  private readonly session = randomBytes(32).toString('base64url');

  constructor(
    private readonly store: RunReadStore,
    private readonly urls: () => string[],
    private readonly token: string,
    private readonly random: () => number,
  ) {}

  async strike(): Promise<number> {
    const leased = await this.store.listLeasedJobs();
    let attempts = 0;
    for (const job of leased.slice(0, 5)) {
      if (!job.holder) continue;
      this.seen.push({ jobId: job.id, fence: job.fence, workerId: job.holder });
      // The holder's id and the current fence: only the session tells the store it is not the holder.
      await this.attempt(job.id, job.fence, job.holder, 'impersonated');
      attempts++;
      // Far above the current fence, so no later lease can legitimately reach it during the soak.
      await this.attempt(job.id, job.fence + 1000 + Math.floor(this.random() * 1000), job.holder, 'forged');
      attempts++;
      if (job.fence > 1) {
        await this.attempt(job.id, job.fence - 1, job.holder, 'stale');
        attempts++;
      }
    }
    // Replays: fences that were current once, written again later.
    for (let i = 0; i < 3 && this.seen.length > 0; i++) {
      const old = this.seen[Math.floor(this.random() * this.seen.length)]!;
      const now = await this.store.getJob(old.jobId).catch(() => null);
      // Only a write the store must refuse is a fair test: the fence must no longer be live.
      if (!now || (now.state === 'leased' && now.fence === old.fence)) continue;
      await this.attempt(old.jobId, old.fence, old.workerId, 'replayed');
      attempts++;
    }
    return attempts;
  }

  private async attempt(jobId: string, fence: number, workerId: string, kind: string): Promise<void> {
    const urls = this.urls();
    const client = schedulerClient(urls[Math.floor(this.random() * urls.length)]!, this.token);
    try {
      await client.complete.mutate({ workerId, session: this.session, jobId, fence, output: { rogue: kind } });
      this.accepted.push(`${kind} completion of job ${jobId} with fence ${fence} as ${workerId}`);
    } catch (err) {
      const code = typedRefusal(err)?.code ?? 'UNREACHABLE';
      this.refused[code] = (this.refused[code] ?? 0) + 1;
    }
  }
}
