import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseBackfillId, type UserName } from '@fenceline/core';
import { hashPassword } from '@fenceline/db/people';
import { callProcedure, cookieOf, startConsoleHttp } from './support/console-http';

const PASSWORD = 'a password for audit tests';
let consoleHttp: Awaited<ReturnType<typeof startConsoleHttp>>;
let cookie: string;

beforeAll(async () => {
  consoleHttp = await startConsoleHttp();
  await consoleHttp.store.createUser({ name: 'olga' as UserName, role: 'operator', passwordHash: await hashPassword(PASSWORD) });
  cookie = cookieOf(await callProcedure(consoleHttp.url, 'auth.signIn', { mutation: true, input: { name: 'olga', password: PASSWORD } }));
});
afterAll(async () => {
  await consoleHttp?.stop();
});

const mutate = (path: string, input: unknown) =>
  callProcedure(consoleHttp.url, path, { mutation: true, input, headers: { cookie, 'x-forwarded-for': '192.0.2.7', 'user-agent': 'audit-test' } });
const spec = (command: string) => ({ id: 'audited', tasks: [{ id: 'one', type: 'noop', config: {} }], name: command });

describe('what the console records in the audit log', () => {
  it('records each saved version, a save that brings an old version back as a revert, and nothing for an unchanged save', async () => {
    expect((await mutate('dags.save', { spec: spec('first') })).status).toBe(200);
    expect((await mutate('dags.save', { spec: spec('second') })).status).toBe(200);
    expect((await mutate('dags.save', { spec: spec('second') })).status).toBe(200);
    expect((await mutate('dags.save', { spec: spec('first') })).status).toBe(200);
    const entries = await consoleHttp.store.listAudit({ dagId: 'audited' });
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['dag.reverted', { version: 3, sameAs: 1 }],
      ['dag.saved', { version: 2 }],
      ['dag.saved', { version: 1 }],
    ]);
    expect(entries[0]).toMatchObject({ actorKind: 'user', actor: 'olga', source: '192.0.2.7', userAgent: 'audit-test' });
  });

  it('records a trigger, a pause and a resume once each, a catch-up change with both policies, and no refused change', async () => {
    const run = (await mutate('dags.trigger', { id: 'audited', requestKey: 'click-1' })).data as { id: string };
    expect((await mutate('dags.setPaused', { id: 'audited', paused: true })).status).toBe(200);
    // Pausing a paused DAG changes nothing and records nothing.
    expect((await mutate('dags.setPaused', { id: 'audited', paused: true })).status).toBe(200);
    expect((await mutate('dags.setPaused', { id: 'audited', paused: false })).status).toBe(200);
    expect((await mutate('dags.setCatchup', { id: 'audited', catchup: { policy: 'none' } })).status).toBe(200);
    // Refused: a DAG that does not exist, and a spec that fails validation.
    expect((await mutate('dags.trigger', { id: 'missing' })).status).toBe(404);
    expect((await mutate('dags.save', { spec: { id: 'audited', tasks: [] } })).status).toBe(400);
    const latest = await consoleHttp.store.listAudit({ actor: 'olga', limit: 4 });
    expect(latest.map((e) => e.action)).toEqual(['dag.catchup_changed', 'dag.resumed', 'dag.paused', 'dag.triggered']);
    expect(latest[3]!.details).toEqual({ runId: run.id, requestKey: 'click-1' });
    expect(latest[0]!.details).toMatchObject({ from: { policy: 'latest' }, to: { policy: 'none' } });
    expect(await consoleHttp.store.listAudit({ dagId: 'missing' })).toEqual([]);
  });

  it('records a backfill started and cancelled once each, and no refused backfill', async () => {
    const hourly = { id: 'audited-backfill', schedule: { kind: 'interval', everyMs: 3_600_000 }, tasks: [{ id: 'one', type: 'noop', config: {} }] };
    expect((await mutate('dags.save', { spec: hourly })).status).toBe(200);
    const range = { dagId: 'audited-backfill', from: '2026-01-01T00:00:00Z', to: '2026-01-02T00:00:00Z' };
    // Refused: an empty range, a month (720 slots) not confirmed, and a mode that does not exist.
    expect((await mutate('backfills.create', { ...range, to: range.from })).status).toBe(400);
    expect((await mutate('backfills.create', { ...range, to: '2026-01-31T00:00:00Z' })).status).toBe(400);
    expect((await mutate('backfills.create', { ...range, mode: 'again' })).status).toBe(400);
    const created = await mutate('backfills.create', { ...range, maxActiveRuns: 2 });
    expect(created.status).toBe(200);
    const id = (created.data as { id: string }).id;
    expect((await mutate('backfills.cancel', { id })).status).toBe(200);
    // Cancelling it again changes nothing and records nothing.
    expect((await mutate('backfills.cancel', { id })).status).toBe(200);
    const entries = await consoleHttp.store.listAudit({ dagId: 'audited-backfill' });
    expect(entries.map((e) => [e.action, e.target])).toEqual([
      ['backfill.cancelled', id],
      ['backfill.created', id],
      ['dag.saved', null],
    ]);
    expect(entries[1]!.details).toEqual({ backfillId: id, from: '2026-01-01T00:00:00.000Z', to: '2026-01-02T00:00:00.000Z', slots: 24, maxActiveRuns: 2 });
    expect(await consoleHttp.store.getBackfill(parseBackfillId(id))).toMatchObject({ state: 'cancelled', requestedBy: 'olga' });
  });

  it('records a limit set, changed and deleted, and no refused change, whose error names the field', async () => {
    expect((await mutate('limits.set', { name: 'warehouse', capacity: 2 })).status).toBe(200);
    expect((await mutate('limits.set', { name: 'warehouse', capacity: 4 })).status).toBe(200);
    // Refused: a capacity below 1, a fraction, a bad name, a limit that does not exist.
    const zero = await mutate('limits.set', { name: 'warehouse', capacity: 0 });
    expect(zero.status).toBe(400);
    expect(zero.error?.message).toContain('INVALID_INPUT: capacity must be at least 1');
    expect((await mutate('limits.set', { name: 'warehouse', capacity: 1.5 })).status).toBe(400);
    const badName = await mutate('limits.set', { name: 'Ware House', capacity: 1 });
    expect(badName.status).toBe(400);
    expect(badName.error?.message).toContain('INVALID_INPUT: name must be lower-case letters');
    expect((await mutate('limits.delete', { name: 'missing' })).status).toBe(404);
    expect((await consoleHttp.store.listResourceLimits()).map((l) => [l.name, l.capacity])).toEqual([['warehouse', 4]]);
    expect((await mutate('limits.delete', { name: 'warehouse' })).status).toBe(200);
    expect(await consoleHttp.store.listResourceLimits()).toEqual([]);
    const entries = (await consoleHttp.store.listAudit({ actor: 'olga', limit: 3 })).map((e) => [e.action, e.target, e.details]);
    expect(entries).toEqual([
      ['limit.deleted', 'warehouse', { capacity: 4 }],
      ['limit.set', 'warehouse', { capacity: 4, previous: 2 }],
      ['limit.set', 'warehouse', { capacity: 2, previous: null }],
    ]);
  });

  it('shows the log to a signed-in caller, filtered, and has no procedure that changes an entry', async () => {
    const listed = await callProcedure(consoleHttp.url, 'audit.list', { input: { action: 'dag.paused', dagId: 'audited' }, headers: { cookie } });
    expect((listed.data as { action: string }[]).map((e) => e.action)).toEqual(['dag.paused']);
    expect((await callProcedure(consoleHttp.url, 'audit.list', { input: {} })).status).toBe(401);
    expect((await callProcedure(consoleHttp.url, 'audit.list', { input: { action: 'dag.exploded' }, headers: { cookie } })).status).toBe(400);
    const { appRouter } = await import('../src/server/routers/app');
    const auditProcedures = Object.keys(appRouter._def.procedures).filter((path) => path.startsWith('audit.'));
    expect(auditProcedures).toEqual(['audit.list']);
  });
});
