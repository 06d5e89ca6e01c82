import { TERMINAL_JOB_STATES, type JobState } from '../model';
import type { DagSpec } from '../spec';
import type { NewJob } from '../store';
import { graphIndexOf, type GraphIndex } from '../dag/graph';
import { maxAttemptsOf } from './backoff';

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
    };
  });
}

const JOB_STATES: readonly JobState[] = ['waiting', 'ready', 'leased', 'succeeded', 'failed', 'upstream_failed', 'cancelled'];
const TERMINAL = new Set<JobState>(TERMINAL_JOB_STATES);

/** Whether a job in `state` is done for good: nothing moves it again in this run. */
export function isTerminalJobState(state: JobState): boolean {
  return TERMINAL.has(state);
}

export type RunOutcome = 'running' | 'succeeded' | 'failed' | 'cancelled';

/**
 * The state machine of one run, over the states of its tasks. A shard leader keeps one
 * per active run in memory and feeds it the events the store confirmed (a lease granted,
 * a job succeeded, a job failed for good, a retry queued); the machine answers which
 * tasks that made ready or upstream_failed, so the leader can write exactly those.
 *
 * Every event costs O(degree of the task), not O(tasks): each task keeps a counter of
 * dependencies not yet succeeded, so a success only touches the task's direct
 * dependents. A final failure touches the part of its downstream closure that is not
 * terminal yet, which it has to change anyway.
 *
 * An event that the states do not allow (a success of a waiting task, say) throws a
 * plain Error: the store refuses such transitions, so reaching one here is a bug in the
 * caller, and silently accepting it would let leader and store disagree.
 */
export class RunMachine {
  private readonly graph: GraphIndex;
  private readonly states: JobState[];
  /** Per task, how many of its dependencies have not succeeded yet. */
  private readonly remaining: Int32Array;
  private readonly tally: Record<JobState, number>;
  /** Ready task indices in the order they became ready. */
  private readonly ready = new Set<number>();

  constructor(spec: DagSpec, states?: Map<string, JobState>) {
    this.graph = graphIndexOf(spec);
    const n = this.graph.ids.length;
    this.states = new Array<JobState>(n);
    this.remaining = new Int32Array(n);
    this.tally = Object.fromEntries(JOB_STATES.map((s) => [s, 0])) as Record<JobState, number>;
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
    // Counters come from the states, so a machine rebuilt from the store after a failover
    // continues exactly where the old leader stopped.
    for (let i = 0; i < n; i++) {
      let left = 0;
      for (const dep of this.graph.deps[i]!) if (this.states[dep] !== 'succeeded') left++;
      this.remaining[i] = left;
    }
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

  /**
   * leased (or ready) -> succeeded. Returns the dependents whose dependencies have now
   * all succeeded; they are moved to ready here.
   */
  onSucceeded(taskId: string): { ready: string[] } {
    const i = this.indexOf(taskId);
    this.expect(i, ['leased', 'ready'], 'succeed');
    this.set(i, 'succeeded');
    const ready: string[] = [];
    for (const next of this.graph.dependents[i]!) {
      const left = --this.remaining[next]!;
      if (left === 0 && this.states[next] === 'waiting') {
        this.set(next, 'ready');
        ready.push(this.graph.ids[next]!);
      }
    }
    return { ready };
  }

  /**
   * leased (or ready) -> failed, for good (retries exhausted or not retryable). Every
   * transitive dependent that is not terminal yet becomes upstream_failed, because it
   * can never run; those are returned so the caller can write them in one statement.
   */
  onFailed(taskId: string): { upstreamFailed: string[] } {
    const i = this.indexOf(taskId);
    this.expect(i, ['leased', 'ready'], 'fail');
    // Walk the downstream closure, but do not descend through tasks that are already
    // terminal: a task already upstream_failed had its own downstream marked when it was,
    // so many failures feeding one large subgraph cost O(edges) in total, not per failure.
    const closure: number[] = [];
    const seen = new Set<number>([i]);
    for (let head = -1; head < closure.length; head++) {
      const from = head < 0 ? i : closure[head]!;
      for (const next of this.graph.dependents[from]!) {
        if (seen.has(next)) continue;
        seen.add(next);
        const state = this.states[next]!;
        if (state === 'leased') {
          // A leased task cannot have a dependency that has not succeeded. Refuse before
          // changing anything, so a caller's bug leaves the machine as it was.
          throw new Error(`RunMachine: "${this.graph.ids[next]}" is leased although its upstream "${taskId}" has not succeeded`);
        }
        if (state === 'waiting' || state === 'ready') closure.push(next);
      }
    }
    this.set(i, 'failed');
    const upstreamFailed: string[] = [];
    for (const d of closure) {
      this.set(d, 'upstream_failed');
      upstreamFailed.push(this.graph.ids[d]!);
    }
    return { upstreamFailed };
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
   * succeeded when every task succeeded; once every task is terminal, failed when one
   * failed (or could not run because one did), else cancelled (an operator cancelled
   * tasks and nothing failed); running otherwise.
   */
  outcome(): RunOutcome {
    const n = this.states.length;
    if (this.tally.succeeded === n) return 'succeeded';
    const terminal = this.tally.succeeded + this.tally.failed + this.tally.upstream_failed + this.tally.cancelled;
    if (terminal < n) return 'running';
    return this.tally.failed + this.tally.upstream_failed > 0 ? 'failed' : 'cancelled';
  }

  /** Ready tasks, in the order they became ready. */
  readyTasks(): string[] {
    return [...this.ready].map((i) => this.graph.ids[i]!);
  }

  counts(): Record<JobState, number> {
    return { ...this.tally };
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
