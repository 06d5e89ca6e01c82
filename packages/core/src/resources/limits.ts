import { z } from 'zod';
import { InvalidDagError, InvalidInputError, type DagIssue } from '../errors';
import type { DagSpec } from '../spec';

/**
 * Named resource limits: a capacity of units (`warehouse: 10`) that tasks of any DAG
 * consume while they hold a lease, so that no more than that many jobs touching one
 * external system run at once across the cluster. A job's units are held by its lease
 * and counted only while that lease (job, fence) is the job's live one, so they are
 * released by every way a lease ends (result, expiry, revoke, cancel), with the same
 * fencing as the lease itself; the store grants a limited job only if its units fit.
 */

/** A limit's name: lower-case letters, digits and dashes, like a pool's. */
export const LIMIT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;
export const LIMIT_NAME_CHARACTERS = 'must be lower-case letters, digits and -, starting with a letter or digit, at most 63 characters';
export const MAX_LIMIT_CAPACITY = 1_000_000;
/** Limits one task may consume. */
export const MAX_TASK_RESOURCES = 16;

export const limitNameSchema = z.string().regex(LIMIT_NAME_PATTERN, LIMIT_NAME_CHARACTERS);
export const limitCapacitySchema = z
  .number({ error: 'must be a number' })
  .int('must be a whole number')
  .min(1, 'must be at least 1 (a limit of 0 would never let a job run; delete the limit instead)')
  .max(MAX_LIMIT_CAPACITY, `must be at most ${MAX_LIMIT_CAPACITY}`);

/** What a task consumes: units per limit name, each at least 1. */
export const taskResourcesSchema = z
  .record(limitNameSchema, z.number().int('units must be a whole number').min(1, 'units must be at least 1').max(MAX_LIMIT_CAPACITY))
  .refine((r) => Object.keys(r).length <= MAX_TASK_RESOURCES, `a task may consume at most ${MAX_TASK_RESOURCES} limits`);
export type TaskResources = z.output<typeof taskResourcesSchema>;

/** A limit as the store keeps it, with its use right now. */
export interface ResourceLimitRow {
  name: string;
  capacity: number;
  /** Units held by live leases. */
  used: number;
  /** Ready jobs that consume it and have no lease yet (waiting for units or for a worker). */
  waiting: number;
  updatedAt: Date;
}

/** Checks a limit's name and capacity as given by an operator; throws the typed error naming the field. */
export function checkLimitInput(input: { name: unknown; capacity: unknown }): { name: string; capacity: number } {
  const name = limitNameSchema.safeParse(input.name);
  if (!name.success) throw new InvalidInputError(`name ${name.error.issues[0]!.message}`, { field: 'name' });
  const capacity = limitCapacitySchema.safeParse(input.capacity);
  if (!capacity.success) throw new InvalidInputError(`capacity ${capacity.error.issues[0]!.message}`, { field: 'capacity' });
  return { name: name.data, capacity: capacity.data };
}

/** A limit's name as a delete or a read names it: anything that is no limit's name names none, and is never looked up. */
export function isLimitName(name: unknown): name is string {
  return typeof name === 'string' && LIMIT_NAME_PATTERN.test(name);
}

/**
 * The problems of a spec's resource use against the limits that exist: a task naming a
 * limit that does not exist, or asking for more units than the limit has, could never
 * run, so the stores refuse such a spec at apply time. Each problem names its field.
 */
export function resourceProblems(spec: DagSpec, capacities: ReadonlyMap<string, number>): DagIssue[] {
  const problems: DagIssue[] = [];
  spec.tasks.forEach((task, i) => {
    for (const [name, units] of Object.entries(task.resources ?? {})) {
      const capacity = capacities.get(name);
      const path = `tasks.${i}.resources.${name}`;
      const taskIds = [task.id];
      if (capacity === undefined)
        problems.push({
          kind: 'resource-limit',
          path,
          taskIds,
          message: `task ${task.id} consumes limit "${name}", which does not exist (create it with fenceline limit set ${name} N)`,
        });
      else if (units > capacity)
        problems.push({ kind: 'resource-limit', path, taskIds, message: `task ${task.id} asks for ${units} units of limit "${name}", which has only ${capacity}` });
    }
  });
  return problems;
}

/** Throws the spec's typed refusal for resourceProblems, listing every problem; nothing is stored. */
export function assertResourcesFit(spec: DagSpec, capacities: ReadonlyMap<string, number>): void {
  const problems = resourceProblems(spec, capacities);
  if (problems.length === 0) return;
  throw new InvalidDagError(`DAG ${spec.id} is invalid: ${problems.map((p) => `${p.path}: ${p.message}`).join('; ')}`, problems);
}
