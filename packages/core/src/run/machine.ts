import { TERMINAL_JOB_STATES, type JobState } from '../model';
import type { DagSpec } from '../spec';
import type { NewJob } from '../store/leader';
import { graphIndexOf, type GraphIndex } from '../dag/graph';
import { maxAttemptsOf } from './backoff';
import { judge, type DepTally, type TriggerRule } from './trigger-rules';

/**
 * The jobs a new run of `spec` starts with, in spec order: roots are ready at once, every
 * other task waits for its dependencies.
 */
export function initialJobs(spec: DagSpec): NewJob[] {
  const graph = graphIndexOf(spec);
  return spec.tasks.map((task) => {
    const index = graph.indexOf.get(task.id);
    const isRoot = index === undefined || graph.deps[index]!.length === 0;
    return {
      taskId: task.id,
      state: isRoot ? 'ready' : 'waiting',
      maxAttempts: maxAttemptsOf(task),
      priority: task.priority,
      retryBackoffMs: task.retryBackoffMs,
      retryBackoffMaxMs: task.retryBackoffMaxMs,
      timeoutMs: task.timeoutMs,
      ...(task.resources && Object.keys(task.resources).length > 0 ? { resources: task.resources } : {}),
    };
  });
}

/** What a machine reads of a stored spec: its graph index and each task's trigger rule, by index. */
interface Shape {
  graph: GraphIndex;
  rules: readonly TriggerRule[];
}

const shapes = new WeakMap<DagSpec, Shape>();

/**
 * The shape of a spec that is no longer changed, built once per spec object as its graph
 * index is (graphIndexOf): a leader rebuilds a machine for every run it holds at each
 * reconciliation, and a day of 100,000 DAGs rebuilds millions of them.
 */
function shapeOf(spec: DagSpec): Shape {
  let shape = shapes.get(spec);
  if (!shape) {
    const graph = graphIndexOf(spec);
    shape = { graph, rules: graph.positions.map((p) => spec.tasks[p]!.trigger ?? 'all_success') };
    shapes.set(spec, shape);
  }
  return shape;
}
const TERMINAL = new Set<JobState>(TERMINAL_JOB_STATES);

/** Whether a job in `state` is done for good: nothing moves it again in this run. */
export function isTerminalJobState(state: JobState): boolean {
  return TERMINAL.has(state);
}

export type RunOutcome = 'running' | 'succeeded' | 'failed' | 'cancelled';

/** What one event decided for the tasks below it: the ones to make ready, to mark upstream_failed, to mark skipped. */
export interface Settled {
  ready: string[];
  upstreamFailed: string[];
  skipped: string[];
}

/**
 * The state machine of one run, over the states of its tasks. A shard leader keeps one
 * per active run in memory and feeds it the events the store confirmed (a lease granted,
 * a job succeeded, a job failed for good, a retry queued); the machine answers which
 * tasks that made ready, upstream_failed or skipped, by each task's trigger rule
 * (trigger-rules.ts), so the leader can write exactly those.
 *
 * Every event costs O(degree of the task), not O(tasks): each task keeps a tally of how
 * its dependencies ended, so an ending only touches the task's direct dependents, and
 * goes further down only through the tasks it decided (a failure dooming a subgraph).
 *
 * An event that the states do not allow (a success of a waiting task, say) throws a
 * plain Error: the store refuses such transitions, so reaching one here is a bug in the
 * caller, and silently accepting it would let leader and store disagree.
 */
export class RunMachine {
  private readonly graph: GraphIndex;
  private readonly rules: readonly TriggerRule[];
  private readonly states: JobState[];
  /** Per task, how its dependencies have ended so far. */
  private readonly tallies: DepTally[];
  private readonly tally: Record<JobState, number>;
  /** Ready task indices in the order they became ready. */
  private readonly ready = new Set<number>();

  constructor(spec: DagSpec, states?: Map<string, JobState>) {
    const shape = shapeOf(spec);
    this.graph = shape.graph;
    const n = this.graph.ids.length;
    this.rules = shape.rules;
    this.states = new Array<JobState>(n);
    this.tally = { waiting: 0, ready: 0, leased: 0, succeeded: 0, failed: 0, upstream_failed: 0, skipped: 0, cancelled: 0 };
    if (states !== undefined) {
      for (const taskId of states.keys()) {
        if (!this.graph.indexOf.has(taskId)) throw new Error(`RunMachine: state given for "${taskId}", which is not a task of DAG "${spec.id}"`);
      }
    }
    for (let i = 0; i < n; i++) {
      // A task missing from `states` starts as it would in a new run.
      const initial: JobState = this.graph.deps[i]!.length === 0 ? 'ready' : 'waiting';
      const state = states?.get(this.graph.ids[i]!) ?? initial;
      this.states[i] = state;
      this.tally[state]++;
      if (state === 'ready') this.ready.add(i);
    }
    // Tallies come from the states, so a machine rebuilt from the store after a failover
    // continues exactly where the old leader stopped.
    this.tallies = this.graph.deps.map((deps) => {
      const t: DepTally = { total: deps.length, succeeded: 0, failed: 0, skipped: 0, cancelled: 0, done: 0 };
      for (const d of deps) count(t, this.states[d]!);
      return t;
    });
  }

  /** Task ids in spec order. */
  taskIds(): string[] {
    return [...this.graph.ids];
  }

  state(taskId: string): JobState {
    return this.states[this.indexOf(taskId)]!;
  }

  /** ready -> leased: the store granted a lease. */
  onLeased(taskId: string): void {
    const i = this.indexOf(taskId);
    this.expect(i, ['ready'], 'be leased');
    this.set(i, 'leased');
  }

  /** leased (or ready) -> succeeded, and what that decides below it. */
  onSucceeded(taskId: string): Settled {
    const i = this.indexOf(taskId);
    this.expect(i, ['leased', 'ready'], 'succeed');
    return this.end(i, 'succeeded');
  }

  /**
   * leased (or ready) -> failed, for good (retries exhausted or not retryable), and what
   * that decides below it: by the default rule every transitive dependent that has not
   * started becomes upstream_failed, while an all_done or one_failed task below may run.
   */
  onFailed(taskId: string): Settled {
    const i = this.indexOf(taskId);
    this.expect(i, ['leased', 'ready'], 'fail');
    return this.end(i, 'failed');
  }

  /** leased -> ready: the attempt failed (or its lease expired) and attempts remain. */
  onRetry(taskId: string): void {
    const i = this.indexOf(taskId);
    this.expect(i, ['leased'], 'be retried');
    this.set(i, 'ready');
  }

  /**
   * Every task not yet terminal becomes cancelled (an operator cancelled the run).
   * Returns the tasks it changed.
   */
  cancelAll(): { cancelled: string[] } {
    const cancelled: string[] = [];
    for (let i = 0; i < this.states.length; i++) {
      if (!TERMINAL.has(this.states[i]!)) {
        this.set(i, 'cancelled');
        cancelled.push(this.graph.ids[i]!);
      }
    }
    return { cancelled };
  }

  /**
   * Decides every waiting task whose rule can be judged already: what a machine rebuilt
   * from the store (after a crash, or an operator's action) finds undone.
   */
  settleAll(): Settled {
    const out: Settled = { ready: [], upstreamFailed: [], skipped: [] };
    for (let i = 0; i < this.states.length; i++) if (this.states[i] === 'waiting' && this.decide(i, out)) this.walk(i, out);
    return out;
  }

  /**
   * succeeded when every task succeeded or was skipped; once every task is terminal,
   * failed when one failed (or could not run because one did), else cancelled when an
   * operator cancelled tasks, else succeeded; running otherwise.
   */
  outcome(): RunOutcome {
    const n = this.states.length;
    const t = this.tally;
    if (t.succeeded + t.skipped === n) return 'succeeded';
    if (t.succeeded + t.failed + t.upstream_failed + t.skipped + t.cancelled < n) return 'running';
    if (t.failed + t.upstream_failed > 0) return 'failed';
    return t.cancelled > 0 ? 'cancelled' : 'succeeded';
  }

  /** Ready tasks, in the order they became ready. */
  readyTasks(): string[] {
    return [...this.ready].map((i) => this.graph.ids[i]!);
  }

  counts(): Record<JobState, number> {
    return { ...this.tally };
  }

  /** Ends task `i` and walks what that decides downstream. */
  private end(i: number, state: JobState): Settled {
    this.set(i, state);
    const out: Settled = { ready: [], upstreamFailed: [], skipped: [] };
    this.walk(i, out);
    return out;
  }

  /**
   * Carries task `i`'s end to its dependents, breadth first and without recursion (a chain
   * of 20,000 tasks doomed at once must not exhaust the stack): each dependent's tally
   * counts it, and a waiting dependent whose rule is now decided goes on in turn if that
   * ended it.
   */
  private walk(i: number, out: Settled): void {
    const ended = [i];
    for (let head = 0; head < ended.length; head++) {
      const from = ended[head]!;
      for (const next of this.graph.dependents[from]!) {
        count(this.tallies[next]!, this.states[from]!);
        if (this.states[next] === 'waiting' && this.decide(next, out)) ended.push(next);
      }
    }
  }

  /** Judges a waiting task's rule and applies the verdict; true when that ended the task. */
  private decide(i: number, out: Settled): boolean {
    const verdict = judge(this.rules[i]!, this.tallies[i]!);
    const id = this.graph.ids[i]!;
    if (verdict === 'wait') return false;
    if (verdict === 'run') {
      this.set(i, 'ready');
      out.ready.push(id);
      return false;
    }
    this.set(i, verdict === 'doom' ? 'upstream_failed' : 'skipped');
    (verdict === 'doom' ? out.upstreamFailed : out.skipped).push(id);
    return true;
  }

  private indexOf(taskId: string): number {
    const i = this.graph.indexOf.get(taskId);
    if (i === undefined) throw new Error(`RunMachine: "${taskId}" is not a task of this DAG`);
    return i;
  }

  private expect(i: number, allowed: readonly JobState[], verb: string): void {
    const state = this.states[i]!;
    if (!allowed.includes(state)) {
      throw new Error(`RunMachine: task "${this.graph.ids[i]}" cannot ${verb} from state "${state}" (allowed from: ${allowed.join(', ')})`);
    }
  }

  private set(i: number, state: JobState): void {
    const previous = this.states[i]!;
    this.tally[previous]--;
    this.tally[state]++;
    this.states[i] = state;
    if (previous === 'ready') this.ready.delete(i);
    if (state === 'ready') this.ready.add(i);
  }
}

/** Adds one dependency's end to a tally; a dependency not ended yet adds nothing. */
function count(t: DepTally, state: JobState): void {
  switch (state) {
    case 'succeeded':
      t.succeeded++;
      break;
    case 'failed':
    case 'upstream_failed':
      t.failed++;
      break;
    case 'skipped':
      t.skipped++;
      break;
    case 'cancelled':
      t.cancelled++;
      break;
    default:
      return;
  }
  t.done++;
}
