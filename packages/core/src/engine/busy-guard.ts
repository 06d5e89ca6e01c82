/**
 * The steps of a shard leader that others must wait for or keep out of while in flight:
 * - `starting`: a DAG's queued runs are being started (keyed by DAG): one start loop at a
 *   time, and no run of the DAG is created running meanwhile;
 * - `granting`: a job's grant statement is out (keyed by job): nothing re-reads the job
 *   until it answers;
 * - `acting`: an operator action is being written for a run: dispatch grants none of its jobs;
 * - `finishing`: a run's finish write is out, so two job ends racing to finish it write once;
 * - `settling`: promotions or ends of a run's jobs are out, by how many (the one kind many
 *   steps hold at once): the run is not finished meanwhile.
 */
export type BusyKind = 'starting' | 'granting' | 'acting' | 'finishing' | 'settling';

/** The kinds several steps may hold for one key at once; the guard counts them. */
const SHARED: ReadonlySet<BusyKind> = new Set<BusyKind>(['settling']);

/**
 * One owner for what a shard leader has in flight, by kind and key (a run, a DAG or a
 * job, as `BusyKind` says). A step begins and ends its kind here, and the others ask here
 * rather than each keeping a set of its own.
 */
export class BusyGuard {
  private readonly held: Record<BusyKind, Map<string, number>> = {
    starting: new Map(),
    granting: new Map(),
    acting: new Map(),
    finishing: new Map(),
    settling: new Map(),
  };

  /**
   * Begins a step unless one of the kind already holds the key; says whether it began. A
   * shared kind always begins.
   */
  tryBegin(key: string, kind: BusyKind): boolean {
    if (!SHARED.has(kind) && this.held[kind].has(key)) return false;
    this.begin(key, kind);
    return true;
  }

  /**
   * Begins a step whether or not one of the kind holds the key: of a kind only one step
   * holds at a time, it stays held once, and one `end` ends it.
   */
  begin(key: string, kind: BusyKind): void {
    const held = this.held[kind];
    held.set(key, SHARED.has(kind) ? (held.get(key) ?? 0) + 1 : 1);
  }

  /** Ends one step of the kind on the key; ending what is not held does nothing. */
  end(key: string, kind: BusyKind): void {
    const held = this.held[kind];
    const left = (held.get(key) ?? 1) - 1;
    if (left > 0) held.set(key, left);
    else held.delete(key);
  }

  isBusy(key: string, kind: BusyKind): boolean {
    return this.held[kind].has(key);
  }

  /** Whether a step of the kind holds any of the keys (the grants out for a run's jobs). */
  anyBusy(keys: Iterable<string>, kind: BusyKind): boolean {
    const held = this.held[kind];
    for (const key of keys) if (held.has(key)) return true;
    return false;
  }
}
