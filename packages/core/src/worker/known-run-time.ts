import type { Assignment } from '../engine/worker-pool';

/**
 * How long a job will run, where its config says so: a sleep lasts its duration. Null for
 * every other type, whose length nobody can tell in advance. A stopping worker hands back
 * at once the jobs this says will outlast its grace.
 */
export function knownRunTimeMs(task: Assignment['task']): number | null {
  if (task.type !== 'sleep') return null;
  const duration = Number(task.config.durationMs);
  return Number.isFinite(duration) ? duration : null;
}
