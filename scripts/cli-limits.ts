import { checkLimitInput, InvalidInputError, NotFoundError, type AuditStore, type ResourceLimitStore } from '@fenceline/core';
import { cliAudit } from './cli-people';

/** The `limit` commands' lines of the CLI's help. */
export const LIMIT_HELP = `  limit set <NAME> <CAPACITY>      create a resource limit, or change its capacity (units held at once across the cluster)
  limit list                       resource limits: name, capacity, units used by live leases, ready jobs waiting
  limit delete <NAME>              delete a resource limit (a DAG still consuming it cannot be applied again)`;

/**
 * Named resource limits, for an operator. The store checks the name and capacity and
 * refuses bad input with the typed error naming the field, before anything is written;
 * every change goes into the audit log with the OS user as the actor, as the CLI's other
 * changes do.
 */
export async function limitCommand(
  store: Pick<ResourceLimitStore, 'setResourceLimit' | 'deleteResourceLimit' | 'listResourceLimits'> & AuditStore,
  args: string[],
): Promise<number> {
  const [sub, ...rest] = args;
  const operands = rest.filter((a) => !a.startsWith('--'));
  switch (sub) {
    case 'set': {
      const [name, capacityText] = operands;
      if (name === undefined) throw new InvalidInputError('name: limit set needs a NAME and a CAPACITY', { field: 'name' });
      if (capacityText === undefined) throw new InvalidInputError('capacity: limit set needs a CAPACITY (a whole number of units, at least 1)', { field: 'capacity' });
      // Text that is not a plain whole number is refused as such, rather than read as NaN or a float.
      const capacity = /^-?\d+$/.test(capacityText) ? Number(capacityText) : Number.NaN;
      if (Number.isNaN(capacity)) throw new InvalidInputError(`capacity must be a whole number, got "${capacityText}"`, { field: 'capacity' });
      // Checked here too so that a refused change writes no audit entry and touches no row.
      checkLimitInput({ name, capacity });
      const before = (await store.listResourceLimits()).find((l) => l.name === name);
      const row = await store.setResourceLimit({ name, capacity });
      await cliAudit(store, { action: 'limit.set', target: row.name, details: { capacity: row.capacity, previous: before?.capacity ?? null } });
      console.log(`limit ${row.name}: capacity ${row.capacity}${before ? ` (was ${before.capacity})` : ' (created)'}, ${row.used} used, ${row.waiting} waiting`);
      return 0;
    }
    case 'list': {
      const rows = await store.listResourceLimits();
      if (rows.length === 0) {
        console.log('no resource limits (create one with `limit set NAME CAPACITY`)');
        return 0;
      }
      console.table(rows.map((r) => ({ name: r.name, capacity: r.capacity, used: r.used, waiting: r.waiting })));
      return 0;
    }
    case 'delete': {
      const [name] = operands;
      if (name === undefined) throw new InvalidInputError('name: limit delete needs the NAME of a limit (see limit list)', { field: 'name' });
      const before = (await store.listResourceLimits()).find((l) => l.name === name);
      if (!(await store.deleteResourceLimit(name))) throw new NotFoundError(`limit "${name}" does not exist`);
      await cliAudit(store, { action: 'limit.deleted', target: name, details: { capacity: before?.capacity ?? null } });
      console.log(`limit ${name} deleted`);
      return 0;
    }
    default:
      throw new InvalidInputError(`command: limit takes set, list or delete, got "${sub ?? ''}"`, { field: 'command' });
  }
}
