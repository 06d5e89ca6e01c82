import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WorkerId } from '@fenceline/core';
import { createDatabase, dropDatabase, openStore, type SqlStore } from '@fenceline/db';
import { spawnCli, type CliOutcome } from './support/cli-process';
import { ADMIN_URL } from './support/cluster-fixture';

/**
 * `fenceline limit` as an operator runs it: the real CLI process against a database of
 * its own, checked through the store it wrote and the audit log.
 */

let databaseName: string;
let databaseUrl: string;
let store: SqlStore;

beforeAll(async () => {
  databaseName = `fenceline_cli_limits_${randomBytes(4).toString('hex')}`;
  databaseUrl = await createDatabase(ADMIN_URL, databaseName);
  store = await openStore({ databaseUrl, applicationName: 'fenceline-test', max: 2 });
});
afterAll(async () => {
  await store?.close();
  if (databaseName) await dropDatabase(ADMIN_URL, databaseName).catch(() => undefined);
});

function cli(env: Record<string, string>, ...args: string[]): Promise<CliOutcome> {
  return spawnCli({ ...process.env, DATABASE_URL: databaseUrl, FENCELINE_URL: '', ...env }, args);
}

const limit = (...args: string[]) => cli({}, 'limit', ...args);

describe('fenceline limit', () => {
  it('creates a limit, changes its capacity, and audits each change as the CLI', async () => {
    const made = await limit('set', 'warehouse', '3');
    expect(made.stderr).toBe('');
    expect(made.code).toBe(0);
    expect(made.stdout).toBe('limit warehouse: capacity 3 (created), 0 used, 0 waiting\n');
    const changed = await limit('set', 'warehouse', '5');
    expect(changed.code).toBe(0);
    expect(changed.stdout).toBe('limit warehouse: capacity 5 (was 3), 0 used, 0 waiting\n');
    expect((await store.listResourceLimits()).map((l) => [l.name, l.capacity])).toEqual([['warehouse', 5]]);
    const entries = await store.listAudit({ action: 'limit.set' });
    expect(entries.map((e) => e.details)).toEqual([
      { capacity: 5, previous: 3 },
      { capacity: 3, previous: null },
    ]);
    expect(entries[0]).toMatchObject({ actorKind: 'cli', source: 'cli', target: 'warehouse' });
  });

  it('lists name, capacity, used and the ready jobs waiting for it', async () => {
    await store.setResourceLimit({ name: 'api-quota', capacity: 2 });
    const listed = await limit('list');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n').filter((l) => l.includes('│'));
    expect(lines[0]).toMatch(/name.*capacity.*used.*waiting/);
    expect(lines.find((l) => l.includes("'api-quota'"))).toMatch(/'api-quota'\s*│\s*2\s*│\s*0\s*│\s*0/);
    expect(lines.find((l) => l.includes("'warehouse'"))).toMatch(/'warehouse'\s*│\s*5\s*│\s*0\s*│\s*0/);
  });

  it('refuses bad input with the typed error naming the field, exit 1, and changes nothing', async () => {
    const before = await store.listResourceLimits();
    const auditBefore = (await store.listAudit({})).length;
    const zero = await limit('set', 'warehouse', '0');
    expect(zero.code).toBe(1);
    expect(zero.stderr).toMatch(/^INVALID_INPUT: capacity must be at least 1/);
    const notNumber = await limit('set', 'warehouse', 'lots');
    expect(notNumber.code).toBe(1);
    expect(notNumber.stderr).toBe('INVALID_INPUT: capacity must be a whole number, got "lots"\n');
    const fraction = await limit('set', 'warehouse', '1.5');
    expect(fraction.stderr).toMatch(/^INVALID_INPUT: capacity must be a whole number/);
    const badName = await limit('set', 'Bad Name', '2');
    expect(badName.code).toBe(1);
    expect(badName.stderr).toMatch(/^INVALID_INPUT: name must be lower-case letters/);
    const missing = await limit('set', 'warehouse');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^INVALID_INPUT: capacity: limit set needs a CAPACITY/);
    const unknown = await limit('grow', 'warehouse');
    expect(unknown.stderr).toMatch(/^INVALID_INPUT: command: limit takes set, list or delete/);
    for (const r of [zero, notNumber, fraction, badName, missing, unknown]) expect(r.stderr).not.toMatch(/\n\s+at |\bselect\b|\binsert into\b/i);
    expect(await store.listResourceLimits()).toEqual(before);
    expect((await store.listAudit({})).length).toBe(auditBefore);
  });

  it('deletes a limit and audits it; deleting one that does not exist is refused', async () => {
    const gone = await limit('delete', 'api-quota');
    expect(gone.code).toBe(0);
    expect(gone.stdout).toBe('limit api-quota deleted\n');
    expect((await store.listResourceLimits()).map((l) => l.name)).toEqual(['warehouse']);
    const [entry] = await store.listAudit({ action: 'limit.deleted' });
    expect(entry).toMatchObject({ actorKind: 'cli', target: 'api-quota', details: { capacity: 2 } });
    const again = await limit('delete', 'api-quota');
    expect(again.code).toBe(1);
    expect(again.stderr).toBe('NOT_FOUND: limit "api-quota" does not exist\n');
  });

  it('lists live workers with their pool and labels, an older worker that sent no offer in the default pool', async () => {
    await store.registerWorker({
      id: 'gpu-1' as WorkerId,
      slots: 2,
      nodeId: null,
      meta: { offer: { pool: 'gpu', labels: ['region=eu'], types: ['noop'] } },
      session: 's1',
      credentialId: null,
    });
    await store.registerWorker({ id: 'old-1' as WorkerId, slots: 4, nodeId: null, meta: { jobTypes: ['noop'] }, session: 's2', credentialId: null });
    const listed = await cli({}, 'workers');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.split('\n');
    expect(lines.find((l) => l.includes("'gpu-1'"))).toMatch(/'gpu-1'\s*│\s*'gpu'\s*│\s*'region=eu'\s*│\s*2/);
    expect(lines.find((l) => l.includes("'old-1'"))).toMatch(/'old-1'\s*│\s*'default'\s*│\s*'-'\s*│\s*4/);
  });
});
