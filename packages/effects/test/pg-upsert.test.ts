import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fencedUpsert, type EffectReport } from '../src/index';
import { DRIVERS, job, testDatabase, type TestDatabase } from './database';

describe.each(DRIVERS)('fencedUpsert with $name', (driver) => {
  let t: TestDatabase;
  beforeAll(async () => {
    t = await testDatabase();
    await driver.run(t, `create table balances_out (run_id text, task_id text, total int not null, fence bigint not null, primary key (run_id, task_id))`);
  });
  afterAll(async () => {
    await t?.close();
  });

  const upsert = (fence: number, total: number, taskId = 'sum') =>
    fencedUpsert(driver.db(t), job(fence, taskId), { table: 'balances_out', key: { run_id: '17', task_id: taskId }, values: { total } });
  const row = async (taskId = 'sum') => (await driver.run(t, `select total, fence::int as fence from balances_out where task_id = $1`, [taskId]))[0];

  it('inserts, replaces under a fence not lower, and refuses a lower fence in one statement', async () => {
    expect(await upsert(4, 100)).toEqual({ outcome: 'applied', fence: 4 });
    expect(await upsert(4, 101)).toEqual({ outcome: 'applied', fence: 4 });
    expect(await upsert(6, 102)).toEqual({ outcome: 'applied', fence: 6 });
    expect(await upsert(5, 999)).toEqual({ outcome: 'stale', fence: 5 });
    expect(await row()).toEqual({ total: 102, fence: 6 });
  });

  it('leaves the row of the highest fence when holders race on it', async () => {
    const fences = [3, 9, 1, 7, 8, 2, 5, 6, 4];
    const results = await Promise.all(fences.map((f) => upsert(f, f * 10, 'race')));
    expect(await row('race')).toEqual({ total: 90, fence: 9 });
    expect(results.find((r) => r.fence === 9)?.outcome).toBe('applied');
  });

  it('reports the outcome to the context', async () => {
    const reports: EffectReport[] = [];
    await fencedUpsert(
      driver.db(t),
      { ...job(1, 'told'), reportEffect: (r) => reports.push(r) },
      { table: 'balances_out', key: { run_id: '17', task_id: 'told' }, values: { total: 1 } },
    );
    expect(reports).toEqual([{ key: 'run_id=17,task_id=told', sink: 'postgres-upsert', outcome: 'applied', fence: 1 }]);
  });

  it('refuses names that are not plain identifiers and overlapping columns, naming the field', async () => {
    const base = { table: 'balances_out', key: { run_id: '17', task_id: 'bad' }, values: { total: 1 } };
    await expect(fencedUpsert(driver.db(t), job(1), { ...base, table: 'balances_out"; drop table x; --' })).rejects.toMatchObject({ name: 'EffectInputError', field: 'table' });
    await expect(fencedUpsert(driver.db(t), job(1), { ...base, values: { 'total = 0': 1 } })).rejects.toMatchObject({ field: 'values.total = 0' });
    await expect(fencedUpsert(driver.db(t), job(1), { ...base, key: {} })).rejects.toMatchObject({ field: 'key' });
    await expect(fencedUpsert(driver.db(t), job(1), { ...base, values: { fence: 3 } })).rejects.toMatchObject({ field: 'values' });
    expect(await row('bad')).toBeUndefined();
  });
});
