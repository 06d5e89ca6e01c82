import type { Clock, Timers } from '../clock';
import { DeposedLeaderError } from '../errors';
import type { DagId, JobId } from '../ids';
import type { JobRow, JobState, RunRow } from '../model';
import type { DagSpec } from '../spec';
import type { Grant, GrantedLease, LeaderStore, LeaderToken, NewEvent } from '../store';
import { RunMachine } from '../run/machine';
import { DEFAULT_POOL, needKey, needOf } from '../routing/offer';
import { BusyGuard } from './busy-guard';
import { JobIndex, type MemJob } from './job-index';
import { RunEvents } from './run-events';
import { RunQueue } from './run-queue';
import { LeaderWrites } from './leader-writes';
import { SpecCache } from './spec-cache';
import type { LeaderNotifications } from './notifications';
import type { RunTraces } from './run-traces';

/**
 * DAG versions a leader keeps read (most recently used first). A shard of the mission's
 * 100,000 DAGs on 16 shards holds about 6,000; a version not kept is read again, in a
 * batch with others, when its DAG next runs.
 */
const SPECS_PER_SHARD = 1_000;

/** An active run, as the leader keeps it in memory. */
export interface MemRun {
  row: RunRow;
  spec: DagSpec;
  machine: RunMachine;
  jobIdByTask: Map<string, JobId>;
}

export interface LeaderDeps {
  store: LeaderStore;
  clock: Clock;
  timers: Timers;
  token: LeaderToken;
  emit: (event: NewEvent) => void;
  /** Asks the node to run a dispatch round soon (new ready jobs, freed leases). */
  kick: () => void;
  /** Called when the store says this leader was deposed. */
  onDeposed: (shard: number) => void;
  reconcileAfterMs: number;
  /**
   * How this leader's grant statement reaches the store; the node passes one that joins
   * the grants of all its leaders in a dispatch round into one statement.
   */
  grantLeases?: (token: LeaderToken, grants: Grant[], ttlMs: number) => Promise<GrantedLease[]>;
  /** The node's bulk leader writes, shared by all its leaders; a leader alone makes its own. */
  writes?: LeaderWrites;
  /**
   * Whether a worker has left the pool as the node sees it, for the reasons of revoked
   * leases; without it every holder counts as still in the pool.
   */
  holderGone?: (workerId: string | null) => boolean;
  /** Told of leases an operator action revoked, so the node can tell their holders at once. */
  revoked?: (leases: { jobId: JobId; fence: number; holder: string | null }[]) => void;
  /** Told of ended runs and of jobs that failed for good, to queue their notifications. */
  notifications?: LeaderNotifications;
  /** Errors of steps nobody awaits (a restarted start of queued runs), other than an outage of the store. */
  onError?: (where: string, err: unknown) => void;
  /** The node's run and job attempt spans; absent or null with tracing off. */
  traces?: RunTraces | null;
}

/**
 * What one shard leader knows and the steps every part of it shares: its runs and jobs in
 * memory, its queued runs (RunQueue), the work in flight that others must wait for
 * (BusyGuard), the events it tells (RunEvents) and its guarded writes. The parts
 * (RunStarts, LeaseGrants, JobEnds, RunFinish, LeaderSync, RunActions and BackfillSteps,
 * see ShardLeader) each own a kind of step, and change what is kept here through these
 * owners and through adoptRun and dropRun.
 */
export class LeaderState {
  readonly token: LeaderToken;
  readonly index = new JobIndex();
  readonly runs = new Map<string, MemRun>();
  /** Active runs per DAG, for the max-active-runs check on every start. */
  readonly runsByDag = new Map<DagId, Set<string>>();
  readonly queue = new RunQueue();
  readonly specCache = new SpecCache(SPECS_PER_SHARD);
  /** The starts, grants, actions, finishes and settles in flight, which other steps wait for or keep out of. */
  readonly busy = new BusyGuard();
  /** Builds and emits the events of the leader's runs and leases. */
  readonly events: RunEvents;
  deposed = false;
  // Every leader write that many jobs or runs make at once goes through a batcher: the
  // runs of a whole tick, the promotions after a batch of completions and the finished
  // runs share one statement (and one commit), for every shard the node leads.
  readonly writes: LeaderWrites;

  constructor(readonly deps: LeaderDeps) {
    this.token = deps.token;
    this.events = new RunEvents(deps.token, (event) => deps.emit(event));
    this.writes = deps.writes ?? new LeaderWrites(deps.store, deps.timers);
  }

  get shard(): number {
    return this.token.shard;
  }

  /** Runs a leader write; a DeposedLeader refusal marks this leader deposed and yields null. */
  async guard<T>(fn: () => Promise<T>): Promise<T | null> {
    if (this.deposed) return null;
    try {
      return await fn();
    } catch (err) {
      if (err instanceof DeposedLeaderError) {
        this.deposed = true;
        this.deps.onDeposed(this.shard);
        return null;
      }
      throw err;
    }
  }

  adoptRun(row: RunRow, spec: DagSpec, jobs: JobRow[]): MemRun {
    const states = new Map<string, JobState>();
    for (const j of jobs) states.set(j.taskId, j.state);
    const run: MemRun = { row, spec, machine: new RunMachine(spec, states), jobIdByTask: new Map() };
    this.runs.set(row.id, run);
    let active = this.runsByDag.get(row.dagId);
    if (!active) this.runsByDag.set(row.dagId, (active = new Set()));
    active.add(row.id);
    this.index.setCapFraction(row.dagId, spec.capFraction, spec.priority);
    const nowMs = this.deps.clock.nowMs();
    const routes = routesOf(spec);
    for (const j of jobs) {
      run.jobIdByTask.set(j.taskId, j.id);
      this.index.add(memJob(j, nowMs, routes.get(j.taskId) ?? DEFAULT_ROUTE));
    }
    const traces = this.deps.traces;
    if (traces) {
      traces.runStarted(row, this.shard);
      for (const j of jobs) if (j.state === 'ready' || j.state === 'leased') traces.attemptReady(this.index.get(j.id)!, this.shard);
    }
    return run;
  }

  /** Forgets a finished run and its jobs; `outcome` (the machine's, when not given) ends its span. */
  dropRun(run: MemRun, outcome?: string): void {
    this.deps.traces?.runEnded(run.row.id, run.jobIdByTask.values(), outcome ?? run.machine.outcome());
    this.runs.delete(run.row.id);
    const active = this.runsByDag.get(run.row.dagId);
    active?.delete(run.row.id);
    if (active?.size === 0) {
      // A DAG with no active run has no job here either: what is kept per DAG goes with it,
      // or a leader would keep an entry for every DAG it ever ran.
      this.runsByDag.delete(run.row.dagId);
      this.index.forgetDag(run.row.dagId);
    }
    for (const jobId of run.jobIdByTask.values()) this.index.remove(jobId);
  }

  activeRuns(dagId: DagId): number {
    return this.runsByDag.get(dagId)?.size ?? 0;
  }

  async specFor(dagId: string, version: number): Promise<DagSpec | null> {
    const key = `${dagId}@${version}`;
    const cached = this.specCache.get(key);
    if (cached) return cached;
    const spec = await this.writes.readSpec(dagId, version);
    if (spec) this.specCache.set(key, spec);
    return spec;
  }
}

interface Route {
  pool: string;
  need: string;
  resources?: Record<string, number>;
}

const DEFAULT_ROUTE: Route = { pool: DEFAULT_POOL, need: needKey(needOf({ type: 'noop' })) };

/** Each task's pool and need key, computed once per spec (a spec is immutable once stored). */
const routeCache = new WeakMap<DagSpec, Map<string, Route>>();
function routesOf(spec: DagSpec): Map<string, Route> {
  let routes = routeCache.get(spec);
  if (!routes) {
    routes = new Map();
    for (const task of spec.tasks) {
      const need = needOf(task);
      const resources = task.resources && Object.keys(task.resources).length > 0 ? task.resources : undefined;
      routes.set(task.id, { pool: need.pool, need: needKey(need), ...(resources ? { resources } : {}) });
    }
    routeCache.set(spec, routes);
  }
  return routes;
}

function memJob(j: JobRow, nowMs: number, route: Route): MemJob {
  return {
    pool: route.pool,
    need: route.need,
    ...(route.resources ? { resources: route.resources } : {}),
    id: j.id,
    runId: j.runId,
    dagId: j.dagId,
    taskId: j.taskId,
    state: j.state,
    priority: j.priority,
    readyAtMs: j.readyAt?.getTime() ?? nowMs,
    nextAttemptAtMs: j.nextAttemptAt?.getTime() ?? 0,
    fence: j.fence,
    holder: j.holder,
    leasedAtMs: j.leasedAt?.getTime() ?? nowMs,
  };
}
