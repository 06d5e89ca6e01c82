import { checkLimitInput, isLimitName, type ResourceLimitRow } from '@fenceline/core';
import { type ResourceLimitStore } from '@fenceline/core/store';
import { date, type MemJob } from './memory-rows';
import type { MemoryTables } from './memory-tables';

/**
 * Resource limits in memory, with the SQL store's semantics: a hold counts only while its
 * job is leased under the hold's fence, so every end of a lease releases it, and stale
 * holds are dropped when limited jobs are next granted.
 */
export class MemoryResources implements ResourceLimitStore {
  constructor(private readonly tables: MemoryTables) {}

  async setResourceLimit(input: { name: string; capacity: number }): Promise<ResourceLimitRow> {
    const { name, capacity } = checkLimitInput(input);
    this.tables.resourceLimits.set(name, { capacity, updatedAtMs: this.tables.nowMs() });
    return this.rows().find((l) => l.name === name)!;
  }

  async deleteResourceLimit(name: string): Promise<boolean> {
    if (!isLimitName(name)) return false;
    return this.tables.resourceLimits.delete(name);
  }

  async listResourceLimits(): Promise<ResourceLimitRow[]> {
    return this.rows();
  }

  async resourceUse(): Promise<{ name: string; capacity: number; used: number }[]> {
    return this.rows().map(({ name, capacity, used }) => ({ name, capacity, used }));
  }

  private rows(): ResourceLimitRow[] {
    const used = this.used();
    const waiting = new Map<string, number>();
    for (const job of this.tables.jobs.values()) {
      if (job.state !== 'ready' || !job.resources) continue;
      for (const name of Object.keys(job.resources)) waiting.set(name, (waiting.get(name) ?? 0) + 1);
    }
    return [...this.tables.resourceLimits]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, l]) => ({ name, capacity: l.capacity, used: used.get(name) ?? 0, waiting: waiting.get(name) ?? 0, updatedAt: date(l.updatedAtMs) }));
  }

  /** Units held per limit by live leases; holds whose lease has ended are dropped on the way. */
  used(): Map<string, number> {
    const out = new Map<string, number>();
    for (const [jobId, hold] of this.tables.resourceHolds) {
      const job = this.tables.jobs.get(jobId);
      if (!job || job.state !== 'leased' || job.fence !== hold.fence) {
        this.tables.resourceHolds.delete(jobId);
        continue;
      }
      for (const [name, units] of Object.entries(hold.units)) out.set(name, (out.get(name) ?? 0) + units);
    }
    return out;
  }
}

/**
 * One grant batch's check of resource limits, as the SQL statement does it: each limited job
 * adds its units to a running sum per limit in batch order (refused ones too, so the batch
 * never grants past a capacity), and is refused if a limit is missing or would overflow.
 */
export class LimitCheck {
  private readonly used: Map<string, number>;
  private readonly asked = new Map<string, number>();

  constructor(
    private readonly tables: MemoryTables,
    resources: MemoryResources,
  ) {
    this.used = resources.used();
  }

  /** Whether `job` may be granted now; counts its units in the batch either way. */
  admits(job: MemJob): boolean {
    let fits = true;
    for (const [name, units] of Object.entries(job.resources ?? {})) {
      const upto = (this.asked.get(name) ?? 0) + units;
      this.asked.set(name, upto);
      const limit = this.tables.resourceLimits.get(name);
      if (!limit || (this.used.get(name) ?? 0) + upto > limit.capacity) fits = false;
    }
    return fits;
  }

  /** Records the hold of a lease just granted under `fence`. */
  hold(job: MemJob, fence: number): void {
    if (job.resources) this.tables.resourceHolds.set(job.id, { fence, units: job.resources });
  }
}
