import type { DagSpec } from '../spec';

/**
 * The DAG versions a shard leader has read, by `dagId@version`, keeping the most recently
 * used `capacity` of them. A leader reads a version when a run of it is created, triggered
 * or adopted; without a bound it kept every version it ever ran, so a node leading
 * shards of 100,000 DAGs grew through the day by every spec and its graph index (about
 * 1.2 KB each for the mission's one-task DAGs, parsed from JSON: some 116 MB for a node
 * leading every shard), and its garbage collector walked them all. A run holds its own
 * spec, so forgetting a version only costs a batched re-read when the DAG runs again.
 */
export class SpecCache {
  private readonly entries = new Map<string, DagSpec>();

  constructor(private readonly capacity: number) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): DagSpec | undefined {
    const spec = this.entries.get(key);
    if (spec !== undefined) {
      // Map keeps insertion order: moving the entry to the end marks it most recent.
      this.entries.delete(key);
      this.entries.set(key, spec);
    }
    return spec;
  }

  set(key: string, spec: DagSpec): void {
    this.entries.delete(key);
    this.entries.set(key, spec);
    while (this.entries.size > this.capacity) this.entries.delete(this.entries.keys().next().value!);
  }
}
