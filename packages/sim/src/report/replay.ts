import { parseDagId, type DagId, type JobState, type RunState, type RunTrigger } from '@fenceline/core';
import type { ScenarioConfig } from '../scenario/config';
import { scaledCount } from '../scenario/load';
import { memoryStore, type MemoryStore, type MemoryStoreOptions } from '../store/memory-store';
import type { StoreObserver, StoreWrite } from '../store/records';

/** Why a job changed state, named after the store write that changed it. */
export type ReplayCause =
  'created' | 'promoted' | 'upstream-failed' | 'skipped' | 'granted' | 'completed' | 'failed' | 'retry' | 'expired' | 'handed-back' | 'cleared' | 'cancelled' | 'marked';

/** One job's change of state, as the store wrote it. Times are virtual ms since the run began. */
export interface ReplayTransition {
  atMs: number;
  runId: string;
  taskId: string;
  state: JobState;
  cause: ReplayCause;
  /** The worker the change concerns: the new holder, the writer, or the holder whose lease expired. */
  workerId: string | null;
  /** The fence on record after the change. */
  fence: number;
  attempt: number;
}

/** A fenced worker write the store refused (nothing was written). */
export interface ReplayRefusal {
  atMs: number;
  runId: string;
  taskId: string;
  workerId: string;
  fence: number;
  operation: string;
  code: string;
}

export interface ReplayRun {
  runId: string;
  trigger: RunTrigger;
  createdAtMs: number;
  startedAtMs: number | null;
  endedAtMs: number | null;
  state: RunState;
  /**
   * Each task's job state when the simulation ended, in the order of `tasks` (null for a
   * task the run never created a job for). Kept apart from the transitions, so the end of
   * a replay cut short by its cap is still right.
   */
  endStates: (JobState | null)[];
}

/** One DAG's runs as they happened in a simulation, for drawing the DAG over virtual time. */
export interface DagReplay {
  dagId: string;
  tasks: { id: string; type: string; dependsOn: string[] }[];
  runs: ReplayRun[];
  /** In store order, so times never decrease. */
  transitions: ReplayTransition[];
  refusals: ReplayRefusal[];
  /** Virtual ms at which the simulation ended. */
  endMs: number;
  limits: { maxTransitions: number; maxRefusals: number; maxJobs: number };
  /** What did not fit under the limits: later transitions and refusals, and runs not followed at all. */
  dropped: { transitions: number; refusals: number; runs: number };
  /** When the first transition that did not fit happened; null when the replay is whole. */
  truncatedAtMs: number | null;
}

export interface ReplayOptions {
  /** The DAG to follow; by default the first fan-out DAG, else the first with more than one task, else the first. */
  dagId?: string;
  maxTransitions?: number;
  maxRefusals?: number;
  /** Runs are followed while their jobs together stay under this many. */
  maxJobs?: number;
}

/**
 * Fifty thousand transitions cover a 10,000-job fan-out with its grants, hand-backs and
 * completions (about five each) and stay a few megabytes of JSON, small enough to post
 * from a Web Worker to the page.
 */
export const REPLAY_LIMITS = { maxTransitions: 50_000, maxRefusals: 1_000, maxJobs: 50_000 } as const;

/** The DAG a replay follows when the caller names none: ids are `${group}-${n}`, in load order. */
export function defaultReplayDag(config: ScenarioConfig): string | null {
  const group = config.load.find((g) => g.shape === 'fanout') ?? config.load.find((g) => g.tasks > 1) ?? config.load[0];
  return group ? `${group.name}-0` : null;
}

/** Whether a scenario generates a DAG with this id (checked before a long run, not after). */
function generates(config: ScenarioConfig, dagId: string): boolean {
  return config.load.some((g) => {
    if (!dagId.startsWith(`${g.name}-`)) return false;
    const n = dagId.slice(g.name.length + 1);
    return /^(0|[1-9][0-9]*)$/.test(n) && Number(n) < scaledCount(g.count, config.scale);
  });
}

interface TrackedJob {
  run: ReplayRun;
  taskId: string;
  /** The last worker granted the job, to name it when its lease expires. */
  holder: string | null;
}

/** The fenced worker writes whose refusals a replay lists; each takes its leases as its first argument. */
const FENCED_WRITES = ['renewLeases', 'completeJobs', 'failJobs', 'releaseJobs'] as const;

/**
 * Records a replay of one DAG while a world runs, by observation only: it sees the store's
 * write records and the outcome of fenced worker writes, reads the store, and changes
 * nothing, so a run's trace hash is the same with or without it (a test checks it).
 *
 * It reaches the store through the world's `makeStore` option rather than a hook inside
 * the world: the world attaches its own observer (checker, metrics, trace) with
 * `observe()`, and the recorder wraps whichever observer is attached so that it is told
 * of each write right after the world is.
 */
export class ReplayRecorder {
  readonly dagId: DagId;
  private readonly limits: DagReplay['limits'];
  private readonly startMs: number;
  private store: MemoryStore | null = null;
  private readonly runs: ReplayRun[] = [];
  private readonly runsById = new Map<string, ReplayRun>();
  private readonly jobs = new Map<string, TrackedJob>();
  private readonly transitions: ReplayTransition[] = [];
  private readonly refusals: ReplayRefusal[] = [];
  private readonly dropped = { transitions: 0, refusals: 0, runs: 0 };
  private truncatedAtMs: number | null = null;

  constructor(config: ScenarioConfig, options: ReplayOptions = {}) {
    const dagId = options.dagId ?? defaultReplayDag(config);
    if (dagId === null) throw new Error('replay: the scenario has no DAGs');
    if (!generates(config, dagId)) throw new Error(`replay: scenario "${config.name}" has no DAG "${dagId}"`);
    this.dagId = parseDagId(dagId);
    this.startMs = Date.parse(config.startAt);
    this.limits = {
      maxTransitions: options.maxTransitions ?? REPLAY_LIMITS.maxTransitions,
      maxRefusals: options.maxRefusals ?? REPLAY_LIMITS.maxRefusals,
      maxJobs: options.maxJobs ?? REPLAY_LIMITS.maxJobs,
    };
  }

  /** Wraps a world's store factory so that the store it builds is observed. */
  wrap(makeStore?: (options: MemoryStoreOptions) => MemoryStore): (options: MemoryStoreOptions) => MemoryStore {
    return (options) => {
      const store = makeStore ? makeStore(options) : memoryStore(options);
      this.attach(store, options.nowMs);
      return store;
    };
  }

  private attach(store: MemoryStore, nowMs: () => number): void {
    this.store = store;
    const observe = store.observe.bind(store);
    const record = (w: StoreWrite): void => this.observe(w);
    // The world attaches its observer after building the store; ours runs right after it.
    store.observe = (observer: StoreObserver | undefined) =>
      observe((w) => {
        observer?.(w);
        record(w);
      });
    observe(record);
    const methods = store as unknown as Record<string, unknown>;
    for (const name of FENCED_WRITES) {
      const original = methods[name];
      if (typeof original !== 'function') continue;
      methods[name] = (...args: unknown[]): unknown => {
        const result = (original as (...a: unknown[]) => unknown).apply(store, args);
        const refs = this.followedRefs(args[0]);
        // The caller gets the very promise the store returned; the extra reaction below
        // only reads the outcome, so no continuation of the world runs in a new order.
        if (refs.length > 0 && result instanceof Promise) {
          const atMs = nowMs();
          result.then(
            (value) => this.outcomes(name, refs, value, atMs),
            (err: unknown) => this.refused(name, refs[0]!, codeOf(err), atMs),
          );
        }
        return result;
      };
    }
  }

  /** The leases named by a fenced write's first argument that belong to a followed run. */
  private followedRefs(arg: unknown): { jobId: string; fence: number; workerId: string }[] {
    const items = Array.isArray(arg) ? arg : [arg];
    const out: { jobId: string; fence: number; workerId: string }[] = [];
    for (const item of items) {
      const ref = (item && typeof item === 'object' && 'ref' in item ? (item as { ref: unknown }).ref : item) as { jobId?: unknown; fence?: unknown; workerId?: unknown } | null;
      if (ref && typeof ref.jobId === 'string' && this.jobs.has(ref.jobId)) out.push({ jobId: ref.jobId, fence: Number(ref.fence), workerId: String(ref.workerId) });
    }
    return out;
  }

  /** Batch writes report a refusal per item instead of rejecting. */
  private outcomes(operation: string, refs: { jobId: string; fence: number; workerId: string }[], value: unknown, atMs: number): void {
    if (!Array.isArray(value)) return;
    for (const outcome of value as { jobId?: string; ok?: boolean; code?: string; error?: unknown }[]) {
      if (outcome?.ok !== false) continue;
      const ref = refs.find((r) => r.jobId === outcome.jobId);
      if (ref) this.refused(operation, ref, outcome.code ?? codeOf(outcome.error), atMs);
    }
  }

  private refused(operation: string, ref: { jobId: string; fence: number; workerId: string }, code: string, atMs: number): void {
    const job = this.jobs.get(ref.jobId);
    if (!job) return;
    if (this.refusals.length >= this.limits.maxRefusals) {
      this.dropped.refusals++;
      return;
    }
    this.refusals.push({ atMs: atMs - this.startMs, runId: job.run.runId, taskId: job.taskId, workerId: ref.workerId, fence: ref.fence, operation, code });
  }

  private observe(w: StoreWrite): void {
    switch (w.op) {
      case 'run:created': {
        if (w.dagId !== this.dagId) return;
        const run: ReplayRun = { runId: w.runId, trigger: w.trigger, createdAtMs: w.atMs - this.startMs, startedAtMs: null, endedAtMs: null, state: 'queued', endStates: [] };
        this.runsById.set(w.runId, run);
        this.runs.push(run);
        return;
      }
      case 'run:started': {
        const run = this.runsById.get(w.runId);
        if (!run) return;
        run.state = 'running';
        run.startedAtMs = w.atMs - this.startMs;
        // A run is followed whole or not at all, so every followed job has its whole story.
        if (this.jobs.size + w.jobIds.length > this.limits.maxJobs) {
          this.runsById.delete(w.runId);
          this.runs.splice(this.runs.indexOf(run), 1);
          this.dropped.runs++;
          return;
        }
        for (const jobId of w.jobIds) {
          const row = this.store?.jobById(jobId);
          if (!row) continue;
          this.jobs.set(jobId, { run, taskId: row.taskId, holder: null });
          this.add(w.atMs, jobId, row.state, 'created', null);
        }
        return;
      }
      case 'run:finished': {
        const run = this.runsById.get(w.runId);
        if (!run) return;
        run.state = w.state;
        run.endedAtMs = w.atMs - this.startMs;
        return;
      }
      case 'job:promoted':
        return this.add(w.atMs, w.jobId, 'ready', 'promoted', null);
      case 'job:upstream_failed':
        return this.add(w.atMs, w.jobId, 'upstream_failed', 'upstream-failed', null);
      case 'job:skipped':
        return this.add(w.atMs, w.jobId, 'skipped', 'skipped', null);
      case 'job:acted':
        return this.add(w.atMs, w.jobId, w.to, w.to === 'waiting' ? 'cleared' : w.to === 'cancelled' ? 'cancelled' : 'marked', null);
      case 'job:granted': {
        const job = this.jobs.get(w.jobId);
        if (!job) return;
        job.holder = w.workerId;
        return this.add(w.atMs, w.jobId, 'leased', 'granted', w.workerId);
      }
      case 'job:swept':
        return this.add(w.atMs, w.jobId, w.state, 'expired', this.jobs.get(w.jobId)?.holder ?? null);
      case 'job:completed':
        return this.add(w.atMs, w.jobId, 'succeeded', 'completed', w.workerId);
      case 'job:failed':
        return this.add(w.atMs, w.jobId, 'failed', 'failed', w.workerId);
      case 'job:retry':
        return this.add(w.atMs, w.jobId, 'ready', 'retry', w.workerId);
      case 'job:released':
        return this.add(w.atMs, w.jobId, 'ready', 'handed-back', w.workerId);
      default:
        return;
    }
  }

  private add(atMs: number, jobId: string, state: JobState, cause: ReplayCause, workerId: string | null): void {
    const job = this.jobs.get(jobId);
    if (!job) return;
    if (this.transitions.length >= this.limits.maxTransitions) {
      this.dropped.transitions++;
      this.truncatedAtMs ??= atMs - this.startMs;
      return;
    }
    // The write records carry no attempt, and not always the new fence; the store's row
    // already holds both, since a record is emitted after its change is made.
    const row = this.store?.jobById(jobId);
    this.transitions.push({ atMs: atMs - this.startMs, runId: job.run.runId, taskId: job.taskId, state, cause, workerId, fence: row?.fence ?? 0, attempt: row?.attempt ?? 0 });
  }

  /** The replay as plain JSON, with each followed job's end state read from the store. */
  async finish(endMs: number): Promise<DagReplay> {
    let tasks: DagReplay['tasks'] = [];
    try {
      const row = await this.store?.getDag(this.dagId);
      tasks = row ? row.spec.tasks.map((t) => ({ id: t.id, type: t.type, dependsOn: [...t.dependsOn] })) : [];
    } catch {
      // A world that crashed before the DAG was stored leaves no spec to draw.
    }
    const index = new Map(tasks.map((t, i) => [t.id, i]));
    for (const run of this.runs) if (run.startedAtMs !== null) run.endStates = tasks.map(() => null);
    for (const [jobId, job] of this.jobs) {
      const i = index.get(job.taskId);
      const row = this.store?.jobById(jobId);
      if (i !== undefined && row) job.run.endStates[i] = row.state;
    }
    return {
      dagId: this.dagId,
      tasks,
      runs: this.runs,
      transitions: this.transitions,
      refusals: this.refusals,
      endMs: endMs - this.startMs,
      limits: { ...this.limits },
      dropped: { ...this.dropped },
      truncatedAtMs: this.truncatedAtMs,
    };
  }
}

function codeOf(err: unknown): string {
  const code = err && typeof err === 'object' && 'code' in err ? (err as { code: unknown }).code : undefined;
  return typeof code === 'string' ? code : 'ERROR';
}
