import type { Timers } from '../clock';
import { DeposedLeaderError } from '../errors';
import type { JobId, RunId } from '../ids';
import type { JobRow } from '../model';
import type { DagSpec } from '../spec';
import type { CreatedRun, LeaderGroup, LeaderStore, LeaderToken, NewJob, ScheduledRunsItem } from '../store';
import { Batcher, type BatcherOptions } from './batcher';

type StartItem = { runId: RunId; jobs: NewJob[] };
type FinishItem = { runId: RunId; state: 'succeeded' | 'failed' | 'cancelled' };

/**
 * The writes shard leaders make in bulk (and their one bulk read, of specs). Each call is
 * one item of a batch; it resolves to that item's result, or rejects with the
 * DeposedLeaderError of its token.
 *
 * One instance serves every leader of a node, so the run creations of a whole tick, or
 * the promotions and finishes after a batch of results, cost one statement for all the
 * shards the node leads rather than one per shard. Each leader's items are still checked
 * against its own token, in its own shard (the store's `...Across` operations).
 */
export class LeaderWrites {
  private readonly create: AcrossBatcher<ScheduledRunsItem, CreatedRun[]>;
  private readonly start: AcrossBatcher<StartItem, JobRow[]>;
  private readonly promoteBatch: AcrossBatcher<JobId, boolean>;
  private readonly skipBatch: AcrossBatcher<JobId, boolean>;
  private readonly skippedBatch: AcrossBatcher<JobId, boolean>;
  private readonly finish: AcrossBatcher<FinishItem, boolean>;
  private readonly specs: Batcher<{ dagId: string; version: number }, DagSpec | null>;

  constructor(store: LeaderStore, timers: Timers) {
    const opts = { windowMs: 0, maxInFlight: 2 };
    // Specs of DAGs a leader has not seen yet (a burst of triggers of many DAGs) are read
    // together, for all leaders of the node: with one reader per shard, a burst of
    // triggers cost about one read per run. A read that fails yields no spec, and the run
    // waits for reconciliation.
    this.specs = new Batcher(timers, { ...opts, maxInFlight: 1, maxBatch: 1000 }, async (keys) => {
      const found = await store.getDagVersions(keys).catch(() => []);
      const byKey = new Map(found.map((row) => [`${row.dagId}@${row.version}`, row.spec]));
      return keys.map((k) => byKey.get(`${k.dagId}@${k.version}`) ?? null);
    });
    // A tick's 1,000 due DAGs go as two statements of 500 side by side rather than one of
    // 1,000: they lock disjoint DAG rows, and the store works on both at once (about 25
    // instead of 36 ms on 2 cores).
    this.create = new AcrossBatcher(timers, { ...opts, maxBatch: 500 }, (groups) => store.createScheduledRunsAcross(groups));
    // Starts are weighed by their jobs: a batch carries at most about 20,000 job rows.
    this.start = new AcrossBatcher(timers, { ...opts, maxBatch: 2000, weight: (i) => 1 + i.item.jobs.length, maxWeight: 20_000 }, (groups) => store.startRunsAcross(groups));
    this.promoteBatch = new AcrossBatcher(timers, { ...opts, maxBatch: 5000 }, async (groups) => asFlags(groups, await store.promoteJobsAcross(groups)));
    this.skipBatch = new AcrossBatcher(timers, { ...opts, maxBatch: 5000 }, async (groups) => asFlags(groups, await store.markUpstreamFailedAcross(groups)));
    this.skippedBatch = new AcrossBatcher(timers, { ...opts, maxBatch: 5000 }, async (groups) => asFlags(groups, await store.markSkippedAcross(groups)));
    this.finish = new AcrossBatcher(timers, { ...opts, maxBatch: 2000 }, (groups) => store.finishRunsAcross(groups));
  }

  /** The spec of a DAG version, or null if it cannot be read now. Not a write: no token. */
  readSpec(dagId: string, version: number): Promise<DagSpec | null> {
    return this.specs.submit({ dagId, version });
  }

  /** The runs created for a due DAG (none if its next_run_at had moved), started ones with their jobs. */
  createRuns(token: LeaderToken, item: ScheduledRunsItem): Promise<CreatedRun[]> {
    return this.create.submit(token, item);
  }

  /** The jobs inserted for a queued run ([] if it was not queued). */
  startRun(token: LeaderToken, item: StartItem): Promise<JobRow[]> {
    return this.start.submit(token, item);
  }

  /** Per job, whether it moved from waiting to ready. */
  promote(token: LeaderToken, jobIds: JobId[]): Promise<boolean[]> {
    return Promise.all(jobIds.map((id) => this.promoteBatch.submit(token, id)));
  }

  /** Per job, whether it moved to upstream_failed. */
  skip(token: LeaderToken, jobIds: JobId[]): Promise<boolean[]> {
    return Promise.all(jobIds.map((id) => this.skipBatch.submit(token, id)));
  }

  /** Per job, whether it moved to skipped. */
  markSkipped(token: LeaderToken, jobIds: JobId[]): Promise<boolean[]> {
    return Promise.all(jobIds.map((id) => this.skippedBatch.submit(token, id)));
  }

  /** Whether the run moved from running to the given end state. */
  finishRun(token: LeaderToken, item: FinishItem): Promise<boolean> {
    return this.finish.submit(token, item);
  }
}

/** Per item of each group, whether the store's list of moved ids holds it. */
function asFlags(groups: LeaderGroup<JobId>[], out: (JobId[] | DeposedLeaderError)[]): (boolean[] | DeposedLeaderError)[] {
  return out.map((moved, g) => {
    if (moved instanceof DeposedLeaderError) return moved;
    const set = new Set(moved);
    return groups[g]!.items.map((id) => set.has(id));
  });
}

/** A Batcher whose items carry their leader's token, sent as one group per token. */
class AcrossBatcher<T, R> {
  private readonly batcher: Batcher<{ token: LeaderToken; item: T }, R | DeposedLeaderError>;

  constructor(timers: Timers, options: BatcherOptions<{ token: LeaderToken; item: T }>, call: (groups: LeaderGroup<T>[]) => Promise<(R[] | DeposedLeaderError)[]>) {
    this.batcher = new Batcher<{ token: LeaderToken; item: T }, R | DeposedLeaderError>(timers, options, async (entries) => {
      const groups: LeaderGroup<T>[] = [];
      const byToken = new Map<string, number>();
      const place = entries.map(({ token, item }) => {
        const key = `${token.shard}/${token.epoch}/${token.nodeId}`;
        let g = byToken.get(key);
        if (g === undefined) {
          g = groups.push({ token, items: [] }) - 1;
          byToken.set(key, g);
        }
        return { g, i: groups[g]!.items.push(item) - 1 };
      });
      const out = await call(groups);
      return place.map(({ g, i }) => {
        const result = out[g]!;
        return result instanceof DeposedLeaderError ? result : (result[i] as R);
      });
    });
  }

  async submit(token: LeaderToken, item: T): Promise<R> {
    const result = await this.batcher.submit({ token, item });
    if (result instanceof DeposedLeaderError) throw result;
    return result;
  }
}
