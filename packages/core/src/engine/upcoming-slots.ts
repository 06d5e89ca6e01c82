import type { Timers } from '../clock';
import type { DueDag } from '../store';

/**
 * DAGs a tick read shortly before they come due, held until their slot. A tick runs once
 * a second, so a DAG found only once it is due gets its run up to a second late; read a
 * little ahead, its run is created on its slot. The DAGs of one slot time share one timer
 * (a cron schedule makes thousands of DAGs due at the same minute), and a DAG stays known
 * here until its release has finished, so a tick that reads it again meanwhile leaves it
 * to the release rather than creating its run a second time.
 */
export class UpcomingSlots {
  private readonly held = new Set<string>();
  private readonly groups = new Map<number, { dags: DueDag[]; cancel: () => void }>();
  /** Slot instants with a group waiting or being released. */
  private readonly instants = new Set<number>();

  /**
   * @param delayUntil local milliseconds from now until a store time (the node's estimate
   *   of the store's clock)
   * @param release creates the runs of the DAGs due at `dueMs`; the DAGs count as held
   *   until it settles
   */
  constructor(
    private readonly timers: Timers,
    private readonly delayUntil: (storeMs: number) => number,
    private readonly release: (dueMs: number, dags: DueDag[]) => Promise<void>,
  ) {}

  /** Whether this DAG, at this slot, is held or being released. */
  has(due: DueDag): boolean {
    return this.held.has(keyOf(due));
  }

  /** Holds a DAG until its next_run_at; a DAG already held at that slot is left as it is. */
  hold(due: DueDag): void {
    const key = keyOf(due);
    if (this.held.has(key)) return;
    this.held.add(key);
    const dueMs = due.nextRunAt.getTime();
    const group = this.groups.get(dueMs);
    if (group) {
      group.dags.push(due);
      return;
    }
    const dags = [due];
    const cancel = this.timers.after(Math.max(0, this.delayUntil(dueMs)), () => {
      this.groups.delete(dueMs);
      void this.release(dueMs, dags)
        .catch(() => undefined)
        .finally(() => {
          for (const d of dags) this.held.delete(keyOf(d));
          // A group for this instant made after the release began keeps it listed.
          if (!this.groups.has(dueMs)) this.instants.delete(dueMs);
        });
    });
    this.groups.set(dueMs, { dags, cancel });
    this.instants.add(dueMs);
  }

  /**
   * The slot instants held or being released, at most `max` of them (the earliest): a tick
   * leaves DAGs at these instants out of its read. A DAG at such an instant that is not
   * held (new, or in a shard led only since) is read once its instant is released.
   */
  heldInstants(max: number): Date[] {
    return [...this.instants]
      .sort((a, b) => a - b)
      .slice(0, max)
      .map((ms) => new Date(ms));
  }

  /** How many DAGs are held or being released. */
  get size(): number {
    return this.held.size;
  }

  /** Drops everything not yet released (the node is stopping). */
  clear(): void {
    for (const group of this.groups.values()) group.cancel();
    this.groups.clear();
    this.held.clear();
    this.instants.clear();
  }
}

function keyOf(due: DueDag): string {
  return `${due.id}@${due.nextRunAt.getTime()}`;
}
