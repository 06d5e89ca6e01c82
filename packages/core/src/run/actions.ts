import { InvalidInputError } from '../errors';
import { characterProblem } from '../input/free-form';
import type { JobId } from '../ids';
import { LIMITS } from '../limits';
import type { JobState } from '../model';
import type { DagSpec } from '../spec';
import type { JobChange, RunActionKind, RunActionRequest } from '../store/run-actions';
import { graphIndexOf } from '../dag/graph';
import { isTerminalJobState } from './machine';
import { requestFingerprintText } from '../request-keys';

export const RUN_ACTION_KINDS: readonly RunActionKind[] = ['cancel', 'clear', 'retry_failed', 'mark_success', 'mark_failed'];

/** The longest reason an operator may give; it is written on jobs and in the event log. */
export const MAX_REASON_LENGTH = 1_000;

/** Kinds that act on named tasks only; the others may name none, meaning the whole run. */
const NEEDS_TASKS = new Set<RunActionKind>(['clear', 'mark_success', 'mark_failed']);
const NEEDS_REASON = new Set<RunActionKind>(['mark_success', 'mark_failed']);

/**
 * Checks a request against the spec of its run's version, before anything is stored:
 * every problem is named by its field, in one InvalidInputError, so a request that would
 * be refused writes nothing.
 */
export function checkRunActionRequest(spec: DagSpec, req: RunActionRequest): void {
  const issues: { field: string; problem: string }[] = [];
  const taskIds = req.taskIds ?? [];
  if (!RUN_ACTION_KINDS.includes(req.kind)) issues.push({ field: 'kind', problem: `must be one of ${RUN_ACTION_KINDS.join(', ')}` });
  if (!Array.isArray(taskIds)) issues.push({ field: 'taskIds', problem: 'must be a list of task ids' });
  else {
    if (NEEDS_TASKS.has(req.kind) && taskIds.length === 0) issues.push({ field: 'taskIds', problem: `${req.kind} needs at least one task` });
    if (req.kind === 'retry_failed' && taskIds.length > 0) issues.push({ field: 'taskIds', problem: 'retry_failed acts on the whole run and takes no tasks' });
    if (taskIds.length > LIMITS.maxTasksPerDag) issues.push({ field: 'taskIds', problem: `at most ${LIMITS.maxTasksPerDag} tasks` });
    const known = new Set(spec.tasks.map((t) => t.id));
    const unknown = taskIds.filter((t) => typeof t !== 'string' || !known.has(t));
    if (unknown.length > 0) issues.push({ field: 'taskIds', problem: `not tasks of DAG ${spec.id}: ${unknown.slice(0, 5).map(String).join(', ')}` });
  }
  const reason = req.reason ?? null;
  if (reason !== null && typeof reason !== 'string') issues.push({ field: 'reason', problem: 'must be text' });
  else if (reason !== null && characterProblem(reason) !== null) issues.push({ field: 'reason', problem: characterProblem(reason)! });
  else if (reason !== null && reason.length > MAX_REASON_LENGTH) issues.push({ field: 'reason', problem: `must be at most ${MAX_REASON_LENGTH} characters` });
  else if (NEEDS_REASON.has(req.kind) && (reason === null || reason.trim() === '')) issues.push({ field: 'reason', problem: `${req.kind} needs a reason` });
  if (issues.length > 0) {
    throw new InvalidInputError(`run action refused: ${issues.map((i) => `${i.field}: ${i.problem}`).join('; ')}`, { issues });
  }
}

export interface PlannedJob {
  jobId: JobId;
  taskId: string;
  state: JobState;
}

export interface ActionPlan {
  changes: JobChange[];
  runState: 'cancelled' | 'running' | null;
}

/**
 * The job changes an action makes, from the job states the leader just read. It is pure:
 * the leader plans, writes the plan conditionally on every job still being in the state
 * read, and plans again if one moved. The run's own steps afterwards (promoting tasks whose
 * dependencies now all succeeded, marking those a failure dooms, finishing the run) are
 * the leader's repair, the same code that completes a crashed leader's half-done steps.
 */
export function planRunAction(spec: DagSpec, jobs: PlannedJob[], action: Pick<RunActionRequest, 'kind' | 'taskIds' | 'downstream'>): ActionPlan {
  const graph = graphIndexOf(spec);
  const byTask = new Map(jobs.map((j) => [j.taskId, j]));
  const named = action.taskIds ?? [];
  const closure = (roots: string[]): string[] => (action.downstream ? closureWithDownstream(graph, roots) : roots);
  const change = (taskIds: string[], to: JobChange['to'], when: (state: JobState) => boolean): JobChange[] => {
    const out: JobChange[] = [];
    for (const taskId of taskIds) {
      const job = byTask.get(taskId);
      if (job && when(job.state) && job.state !== to) out.push({ jobId: job.jobId, taskId, from: job.state, to });
    }
    return out;
  };
  const open = (s: JobState): boolean => !isTerminalJobState(s);
  switch (action.kind) {
    case 'cancel': {
      if (named.length === 0) return { changes: change(graph.ids, 'cancelled', open), runState: 'cancelled' };
      return { changes: change(closure(named), 'cancelled', open), runState: null };
    }
    case 'clear': {
      const changes = change(closure(named), 'waiting', isTerminalJobState);
      return { changes, runState: changes.length > 0 ? 'running' : null };
    }
    case 'retry_failed': {
      const changes = change(graph.ids, 'waiting', (s) => s === 'failed' || s === 'upstream_failed');
      return { changes, runState: changes.length > 0 ? 'running' : null };
    }
    case 'mark_success': {
      // Everything a failure of these tasks doomed may run again, as if they had succeeded.
      // The leader's repair marks again those that another failed upstream still dooms.
      const marked = change(named, 'succeeded', () => true);
      const below = closureWithDownstream(graph, named).filter((t) => !named.includes(t));
      const revived = change(below, 'waiting', (s) => s === 'upstream_failed');
      const changes = [...marked, ...revived];
      return { changes, runState: changes.length > 0 ? 'running' : null };
    }
    case 'mark_failed': {
      const marked = change(named, 'failed', () => true);
      // Tasks below that have not started can no longer run; a running one is left to end.
      const below = closureWithDownstream(graph, named).filter((t) => !named.includes(t));
      const doomed = change(below, 'upstream_failed', (s) => s === 'waiting' || s === 'ready');
      const changes = [...marked, ...doomed];
      return { changes, runState: changes.length > 0 ? 'running' : null };
    }
  }
}

/** The roots and every task below them, each once. */
function closureWithDownstream(graph: ReturnType<typeof graphIndexOf>, roots: string[]): string[] {
  const out = new Set<string>(roots);
  const queue = roots.map((r) => graph.indexOf.get(r)).filter((i): i is number => i !== undefined);
  for (let head = 0; head < queue.length; head++) {
    for (const next of graph.dependents[queue[head]!]!) {
      const id = graph.ids[next]!;
      if (!out.has(id)) {
        out.add(id);
        queue.push(next);
      }
    }
  }
  return [...out];
}

/** What a run action request asks, for its key's fingerprint: everything but who asked and the key. */
export function runActionFingerprint(req: RunActionRequest): string {
  return requestFingerprintText('requestRunAction', req.runId, {
    kind: req.kind,
    taskIds: req.taskIds ?? [],
    downstream: req.downstream === true,
    reason: req.reason ?? null,
  });
}
