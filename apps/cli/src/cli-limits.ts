import { checkLimitInput, InvalidInputError, NotFoundError } from '@fenceline/core';
import { type AuditStore, type ResourceLimitStore } from '@fenceline/core/store';
import { cliAudit } from './cli-people';

/** The `limit` commands' lines of the CLI's help. */
export const LIMIT_HELP = `  limit set <NAME> <CAPACITY>      create a resource limit, or change its capacity (units held at once across the cluster)
  limit list                       resource limits: name, capacity, units used by live leases, ready jobs waiting
  limit delete <NAME>              delete a resource limit (a DAG still consuming it cannot be applied again)`;

/** A `limit` command with its operands checked: what both the store path and the HTTP path act on. */
export type LimitRequest = { sub: 'set'; name: string; capacity: number } | { sub: 'list' } | { sub: 'delete'; name: string };

/**
 * Reads a `limit` command's operands. A capacity that is not a plain whole number is refused
 * as such (rather than read as NaN or a fraction), and a set is checked as the store checks
 * it, so a refused change writes no audit entry, touches no row and sends no request.
 */
export function limitRequest(args: string[]): LimitRequest {
  const [sub, ...rest] = args;
  const operands = rest.filter((a) => !a.startsWith('--'));
  switch (sub) {
    case 'set': {
      const [name, capacityText] = operands;
      if (name === undefined) throw new InvalidInputError('name: limit set needs a NAME and a CAPACITY', { field: 'name' });
      if (capacityText === undefined) throw new InvalidInputError('capacity: limit set needs a CAPACITY (a whole number of units, at least 1)', { field: 'capacity' });
      const capacity = /^-?\d+$/.test(capacityText) ? Number(capacityText) : Number.NaN;
      if (Number.isNaN(capacity)) throw new InvalidInputError(`capacity must be a whole number, got "${capacityText}"`, { field: 'capacity' });
      return { sub, ...checkLimitInput({ name, capacity }) };
    }
    case 'list':
      return { sub };
    case 'delete': {
      const [name] = operands;
      if (name === undefined) throw new InvalidInputError('name: limit delete needs the NAME of a limit (see limit list)', { field: 'name' });
      return { sub, name };
    }
    default:
      throw new InvalidInputError(`command: limit takes set, list or delete, got "${sub ?? ''}"`, { field: 'command' });
  }
}

type LimitLine = { name: string; capacity: number; used: number; waiting: number };

export function printLimitSet(row: LimitLine, previous: number | undefined): void {
  console.log(`limit ${row.name}: capacity ${row.capacity}${previous !== undefined ? ` (was ${previous})` : ' (created)'}, ${row.used} used, ${row.waiting} waiting`);
}

export function printLimits(rows: LimitLine[]): void {
  if (rows.length === 0) {
    console.log('no resource limits (create one with `limit set NAME CAPACITY`)');
    return;
  }
  console.table(rows.map((r) => ({ name: r.name, capacity: r.capacity, used: r.used, waiting: r.waiting })));
}

export function printLimitDeleted(name: string): void {
  console.log(`limit ${name} deleted`);
}

/**
 * Named resource limits, for an operator, against the store. Every change goes into the
 * audit log with the OS user as the actor, as the CLI's other changes do.
 */
export async function limitCommand(
  store: Pick<ResourceLimitStore, 'setResourceLimit' | 'deleteResourceLimit' | 'listResourceLimits'> & AuditStore,
  args: string[],
): Promise<number> {
  const req = limitRequest(args);
  switch (req.sub) {
    case 'set': {
      const before = (await store.listResourceLimits()).find((l) => l.name === req.name);
      const row = await store.setResourceLimit({ name: req.name, capacity: req.capacity });
      await cliAudit(store, { action: 'limit.set', target: row.name, details: { capacity: row.capacity, previous: before?.capacity ?? null } });
      printLimitSet(row, before?.capacity);
      return 0;
    }
    case 'list':
      printLimits(await store.listResourceLimits());
      return 0;
    case 'delete': {
      const before = (await store.listResourceLimits()).find((l) => l.name === req.name);
      if (!(await store.deleteResourceLimit(req.name))) throw new NotFoundError(`limit "${req.name}" does not exist`);
      await cliAudit(store, { action: 'limit.deleted', target: req.name, details: { capacity: before?.capacity ?? null } });
      printLimitDeleted(req.name);
      return 0;
    }
  }
}
