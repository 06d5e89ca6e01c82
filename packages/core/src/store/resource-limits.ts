import type { ResourceLimitRow } from '../resources/limits';

/**
 * Named resource limits (resources/limits.ts): operators set and delete them, the console
 * shows their use, and a node reads their use to plan within what is free (the store
 * itself refuses a grant whose units do not fit, whatever a node planned).
 */
export interface ResourceLimitStore {
  /** Creates or changes a limit; a capacity below 1 is refused (INVALID_INPUT, field capacity). */
  setResourceLimit(input: { name: string; capacity: number }): Promise<ResourceLimitRow>;
  /** Deletes a limit; false if there was none. Jobs that consume it can no longer be granted until it exists again. */
  deleteResourceLimit(name: string): Promise<boolean>;
  /** Every limit by name, with the units live leases hold and the ready jobs that consume it. */
  listResourceLimits(): Promise<ResourceLimitRow[]>;
  /** Every limit's capacity and the units live leases hold, without the waiting count: what a node plans with. */
  resourceUse(): Promise<{ name: string; capacity: number; used: number }[]>;
}
