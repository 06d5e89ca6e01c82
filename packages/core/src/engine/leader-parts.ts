import type { JobEnds } from './job-ends';
import type { LeaderSync } from './leader-sync';
import type { RunActions } from './run-actions';
import type { RunFinish } from './run-finish';
import type { RunStarts } from './run-starts';

/**
 * The parts of one shard leader that call each other: a run's finish starts the DAG's
 * next queued run, a start may finish a run at once, a re-read applies a job's end. Each
 * part is given the ones it calls (a Pick of these) and calls them directly, so a step
 * reads from the part that takes it to the part it hands on to; the ShardLeader makes them
 * and fills this in before any step runs.
 */
export interface LeaderParts {
  starts: RunStarts;
  finish: RunFinish;
  sync: LeaderSync;
  ends: JobEnds;
  actions: RunActions;
}
