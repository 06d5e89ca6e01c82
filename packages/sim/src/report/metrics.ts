import type { StoreWrite } from '../store/records';
import type { MemoryStore } from '../store/memory-store';

/** Percentiles of a sample, in the sample's unit. */
export interface Distribution {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function distribution(values: number[]): Distribution {
  if (values.length === 0) return { count: 0, p50: 0, p90: 0, p99: 0, max: 0, mean: 0 };
  const sorted = Float64Array.from(values).sort();
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
  let sum = 0;
  for (const v of sorted) sum += v;
  return { count: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[sorted.length - 1]!, mean: sum / sorted.length };
}

export interface Sample {
  atMs: number;
  /** Leases held, in total and by the busiest groups of DAGs. */
  leased: number;
  leasedByGroup: Record<string, number>;
  /** Counts during the interval that ended at `atMs`. */
  expired: number;
  refused: number;
  succeeded: number;
  handedBack: number;
}

export interface LeaderChange {
  atMs: number;
  shard: number;
  nodeId: string;
  epoch: number;
}

/**
 * Everything the reports and plots are made of, gathered from the store's write records
 * and the nodes' lifecycle events as they happen. DAG ids are `${group}-${n}`, so figures
 * are kept per group (the fan-out against everyone else).
 */
export class Metrics {
  readonly startLatencyMs = new Map<string, number[]>();
  readonly runMakespanMs = new Map<string, number[]>();
  readonly samples: Sample[] = [];
  readonly leaderChanges: LeaderChange[] = [];
  readonly refusedByCode: Record<string, number> = {};
  readonly refusedByOp: Record<string, number> = {};
  readonly completionsPerJob = new Map<string, number>();
  /** When each job of a group completed, for "99% done by" figures. */
  readonly completedAtByGroup = new Map<string, number[]>();
  readonly storeCalls: Record<string, number> = {};
  totals = { runsCreated: 0, runsFinished: 0, jobsSucceeded: 0, jobsFailed: 0, retries: 0, leasesGranted: 0, leasesExpired: 0, handedBack: 0, refusedWrites: 0, resultWrites: 0 };
  private readonly firstLeased = new Set<string>();
  private readonly runCreatedAt = new Map<string, number>();
  private readonly heldByGroup = new Map<string, number>();
  private readonly leasedJobs = new Map<string, string>();
  private interval = { expired: 0, refused: 0, succeeded: 0, handedBack: 0 };
  private leased = 0;

  constructor(private readonly store: MemoryStore) {}

  static groupOf(dagId: string): string {
    const dash = dagId.lastIndexOf('-');
    return dash > 0 ? dagId.slice(0, dash) : dagId;
  }

  observe(w: StoreWrite): void {
    switch (w.op) {
      case 'run:created':
        this.totals.runsCreated++;
        this.runCreatedAt.set(w.runId, w.atMs);
        break;
      case 'run:finished': {
        this.totals.runsFinished++;
        const created = this.runCreatedAt.get(w.runId);
        if (created !== undefined) {
          push(this.runMakespanMs, Metrics.groupOf(w.dagId), w.atMs - created);
          this.runCreatedAt.delete(w.runId);
        }
        break;
      }
      case 'job:granted': {
        this.totals.leasesGranted++;
        if (!this.firstLeased.has(w.jobId)) {
          this.firstLeased.add(w.jobId);
          const job = this.store.jobById(w.jobId);
          if (job?.readyAtMs != null) push(this.startLatencyMs, Metrics.groupOf(w.dagId), w.atMs - job.readyAtMs);
        }
        this.hold(w.jobId, w.dagId);
        break;
      }
      case 'job:swept':
        this.totals.leasesExpired++;
        this.interval.expired++;
        this.drop(w.jobId);
        break;
      case 'job:released':
        this.totals.handedBack++;
        this.interval.handedBack++;
        this.drop(w.jobId);
        break;
      case 'job:completed':
        this.totals.jobsSucceeded++;
        this.interval.succeeded++;
        this.completionsPerJob.set(w.jobId, (this.completionsPerJob.get(w.jobId) ?? 0) + 1);
        push(this.completedAtByGroup, Metrics.groupOf(w.dagId), w.atMs);
        this.drop(w.jobId);
        break;
      case 'job:failed':
        this.totals.jobsFailed++;
        this.drop(w.jobId);
        break;
      case 'job:retry':
        this.totals.retries++;
        this.drop(w.jobId);
        break;
      case 'result:written':
        this.totals.resultWrites++;
        break;
      case 'shard:acquired':
        this.leaderChanges.push({ atMs: w.atMs, shard: w.shard, nodeId: w.nodeId, epoch: w.epoch });
        break;
      default:
        break;
    }
  }

  /** A worker's write that the store refused (counted where the worker saw it). */
  refused(op: string): void {
    this.totals.refusedWrites++;
    this.interval.refused++;
    this.refusedByOp[op] = (this.refusedByOp[op] ?? 0) + 1;
  }

  /**
   * A refusal's precise reason, as a node logs it (`write:fenced`): workers are all told
   * LEASE_LOST, so the reasons are counted where the operator sees them.
   */
  refusedFor(reason: string): void {
    this.refusedByCode[reason] = (this.refusedByCode[reason] ?? 0) + 1;
  }

  storeCall(method: string): void {
    this.storeCalls[method] = (this.storeCalls[method] ?? 0) + 1;
  }

  sample(atMs: number): void {
    this.samples.push({ atMs, leased: this.leased, leasedByGroup: Object.fromEntries(this.heldByGroup), ...this.interval });
    this.interval = { expired: 0, refused: 0, succeeded: 0, handedBack: 0 };
  }

  peakLeasedByGroup(group: string): number {
    let peak = 0;
    for (const s of this.samples) peak = Math.max(peak, s.leasedByGroup[group] ?? 0);
    return peak;
  }

  private hold(jobId: string, dagId: string): void {
    if (this.leasedJobs.has(jobId)) return;
    const group = Metrics.groupOf(dagId);
    this.leasedJobs.set(jobId, group);
    this.heldByGroup.set(group, (this.heldByGroup.get(group) ?? 0) + 1);
    this.leased++;
  }

  private drop(jobId: string): void {
    const group = this.leasedJobs.get(jobId);
    if (group === undefined) return;
    this.leasedJobs.delete(jobId);
    this.heldByGroup.set(group, (this.heldByGroup.get(group) ?? 1) - 1);
    this.leased--;
  }
}

function push(map: Map<string, number[]>, key: string, value: number): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}
