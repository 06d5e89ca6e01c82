import type { DagId } from '../ids';
import type { RunRow } from '../model';

/**
 * A shard leader's queued runs, per DAG, in the order they start: by scheduled time, and
 * in the order they were queued for equal times.
 *
 * A DAG's list stays in place while its starts take runs from it (`take`), even once
 * empty: the start loop reads the list between its awaits, and a DAG keeps its place in
 * the order of `dagIds` until the loop is done and calls `dropIfEmpty`. Every other
 * removal drops an emptied list at once.
 */
export class RunQueue {
  private readonly byDag = new Map<DagId, RunRow[]>();

  /** Queues a run behind those of its DAG scheduled no later. */
  enqueue(run: RunRow): void {
    const list = this.byDag.get(run.dagId) ?? [];
    list.push(run);
    list.sort((a, b) => a.scheduledAt.getTime() - b.scheduledAt.getTime());
    this.byDag.set(run.dagId, list);
  }

  /** Whether the DAG has a list here, which a start loop in flight may have emptied. */
  hasDag(dagId: DagId): boolean {
    return this.byDag.has(dagId);
  }

  /** Whether this run is queued. */
  has(run: Pick<RunRow, 'id' | 'dagId'>): boolean {
    return this.byDag.get(run.dagId)?.some((r) => r.id === run.id) ?? false;
  }

  /** The DAG's next run to start, left in the queue. */
  peek(dagId: DagId): RunRow | undefined {
    return this.byDag.get(dagId)?.[0];
  }

  /**
   * Takes the DAG's next run out of the queue, leaving its list in place even when
   * emptied (see the class comment). The caller has seen, by `peek`, that the DAG has a list.
   */
  take(dagId: DagId): RunRow | undefined {
    return this.byDag.get(dagId)!.shift();
  }

  /** Drops the DAG's list once its start loop emptied it. */
  dropIfEmpty(dagId: DagId): void {
    if ((this.byDag.get(dagId)?.length ?? 0) === 0) this.byDag.delete(dagId);
  }

  /** Takes the named runs out of the DAG's queue (runs an action or a backfill ended). */
  remove(dagId: DagId, runIds: ReadonlySet<string>): void {
    const list = this.byDag.get(dagId);
    if (!list) return;
    const kept = list.filter((run) => !runIds.has(run.id));
    if (kept.length === 0) this.byDag.delete(dagId);
    else this.byDag.set(dagId, kept);
  }

  /**
   * The DAGs with a list, in the order their lists were made. It is the map's own
   * iterator: a DAG queued while it is walked is visited too.
   */
  dagIds(): IterableIterator<DagId> {
    return this.byDag.keys();
  }

  /** How many runs are queued, over every DAG. */
  size(): number {
    let n = 0;
    for (const list of this.byDag.values()) n += list.length;
    return n;
  }
}
