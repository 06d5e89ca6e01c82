import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EffectInputError, fencedTransaction, type EffectReport } from '../src/index';
import { DRIVERS, job, testDatabase, type TestDatabase } from './database';

/** Runs `text` inside the helper's transaction through whichever driver it handed over. */
async function write(tx: unknown, text: string, values: unknown[]): Promise<void> {
  if (typeof tx === 'function') await (tx as unknown as { unsafe: (t: string, v: unknown[]) => Promise<unknown> }).unsafe(text, values);
  else await (tx as { query: (t: string, v: unknown[]) => Promise<unknown> }).query(text, values);
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(DRIVERS)('fencedTransaction with $name', (driver) => {
  let t: TestDatabase;
  let table = 0;
  beforeAll(async () => {
    t = await testDatabase();
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A fresh effects table per case, so cases do not see each other's rows. */
  async function effectsTable(): Promise<string> {
    const name = `transfers_${++table}`;
    await driver.run(t, `create table ${name} (id bigserial primary key, key text not null, fence bigint not null, amount int not null)`);
    return name;
  }

  const apply = (name: string, fence: number, opts: { key?: string; mode?: 'once' | 'latest'; holdMs?: number; fail?: boolean } = {}) => {
    const reports: EffectReport[] = [];
    const ctx = { ...job(fence), reportEffect: (r: EffectReport) => reports.push(r) };
    const done = fencedTransaction(
      driver.db(t) as never,
      ctx,
      async (tx: unknown) => {
        await write(tx, `insert into ${name} (key, fence, amount) values ($1, $2, 10)`, [opts.key ?? 'books/17/pay', fence]);
        if (opts.holdMs) await pause(opts.holdMs);
        if (opts.fail) throw new Error('the effect failed halfway');
        return fence;
      },
      { ...(opts.key ? { key: opts.key } : {}), ...(opts.mode ? { mode: opts.mode } : {}), table: `ledger_${name}` },
    );
    return { done, reports };
  };

  const rows = async (name: string) => (await driver.run(t, `select key, fence::int as fence from ${name} order by id`)).map((r) => `${String(r.key)}@${String(r.fence)}`);
  const ledger = async (name: string) =>
    (await driver.run(t, `select key, fence::int as fence, applied_fence::int as applied from ledger_${name} order by key`)).map((r) => ({
      key: r.key,
      fence: r.fence,
      applied: r.applied,
    }));

  it('applies a first effect under its fence and records the fence in the ledger it creates', async () => {
    const name = await effectsTable();
    const first = apply(name, 4);
    expect(await first.done).toEqual({ outcome: 'applied', key: 'books/17/pay', fence: 4, value: 4 });
    expect(first.reports).toEqual([{ key: 'books/17/pay', sink: 'postgres', outcome: 'applied', fence: 4 }]);
    expect(await rows(name)).toEqual(['books/17/pay@4']);
    expect(await ledger(name)).toEqual([{ key: 'books/17/pay', fence: 4, applied: 4 }]);
  });

  it('refuses a fence lower than one applied, before the callback runs, and writes nothing', async () => {
    const name = await effectsTable();
    await apply(name, 7).done;
    const late = apply(name, 5);
    expect(await late.done).toEqual({ outcome: 'stale', key: 'books/17/pay', fence: 5, highestFence: 7 });
    expect(late.reports.map((r) => [r.outcome, r.recordedFence])).toEqual([['stale', 7]]);
    expect(await rows(name)).toEqual(['books/17/pay@7']);
    expect(await ledger(name)).toEqual([{ key: 'books/17/pay', fence: 7, applied: 7 }]);
  });

  it('in once mode does not apply again for a retry, and raises the recorded fence', async () => {
    const name = await effectsTable();
    await apply(name, 3).done;
    expect(await apply(name, 6).done).toEqual({ outcome: 'already-applied', key: 'books/17/pay', fence: 6, appliedFence: 3 });
    expect(await apply(name, 6).done).toMatchObject({ outcome: 'already-applied' });
    expect(await apply(name, 5).done).toMatchObject({ outcome: 'stale', highestFence: 6 });
    expect(await rows(name)).toEqual(['books/17/pay@3']);
    expect(await ledger(name)).toEqual([{ key: 'books/17/pay', fence: 6, applied: 3 }]);
  });

  it('in latest mode applies each fence not lower than the highest, and still refuses a lower one', async () => {
    const name = await effectsTable();
    await apply(name, 3, { mode: 'latest' }).done;
    expect(await apply(name, 6, { mode: 'latest' }).done).toMatchObject({ outcome: 'applied', fence: 6 });
    expect(await apply(name, 4, { mode: 'latest' }).done).toMatchObject({ outcome: 'stale', highestFence: 6 });
    expect(await rows(name)).toEqual(['books/17/pay@3', 'books/17/pay@6']);
  });

  it('keeps keys apart: the task identity by default, another key when given', async () => {
    const name = await effectsTable();
    await apply(name, 9).done;
    expect(await apply(name, 2, { key: 'refund-17' }).done).toMatchObject({ outcome: 'applied', key: 'refund-17' });
    expect((await ledger(name)).map((l) => l.key)).toEqual(['books/17/pay', 'refund-17']);
  });

  it('rolls back the whole effect and the ledger row when the callback throws, so a later attempt applies', async () => {
    const name = await effectsTable();
    await expect(apply(name, 2, { fail: true }).done).rejects.toThrow('the effect failed halfway');
    expect(await rows(name)).toEqual([]);
    expect(await ledger(name)).toEqual([]);
    expect(await apply(name, 3).done).toMatchObject({ outcome: 'applied' });
    expect(await rows(name)).toEqual(['books/17/pay@3']);
  });

  it('lets exactly one of two holders racing on one key apply, and never a lower fence after a higher', async () => {
    const name = await effectsTable();
    const keys = Array.from({ length: 12 }, (_, i) => `race-${i}`);
    const outcomes = await Promise.all(
      keys.map(async (key, i) => {
        // The older holder starts first on even keys and second on odd ones; each holds its
        // transaction open a moment so the other's claim has to wait on the row.
        const older = () => apply(name, 10, { key, holdMs: 30 }).done;
        const newer = () => apply(name, 11, { key, holdMs: 30 }).done;
        const [a, b] = i % 2 === 0 ? [older(), pause(5).then(newer)] : [newer(), pause(5).then(older)];
        return Promise.all([a, b]);
      }),
    );
    const effects = await driver.run(t, `select key, count(*)::int as n, max(fence)::int as fence from ${name} group by key order by key`);
    expect(effects).toHaveLength(keys.length);
    for (const e of effects) expect(e.n).toBe(1);
    const orders = new Set<string>();
    for (const [i, pair] of outcomes.entries()) {
      const byFence = Object.fromEntries(pair.map((r) => [r.fence, r.outcome]));
      // Whichever took the row first decides: the newer holder first leaves the older stale;
      // the older first leaves the newer finding the effect done. Never both applied.
      expect([JSON.stringify({ 10: 'stale', 11: 'applied' }), JSON.stringify({ 10: 'applied', 11: 'already-applied' })]).toContain(JSON.stringify(byFence));
      const applied = pair.find((r) => r.outcome === 'applied')!;
      expect(effects.find((e) => e.key === keys[i])?.fence).toBe(applied.fence);
      orders.add(JSON.stringify(byFence));
    }
    // Both orders happened, so both paths were raced.
    expect(orders.size).toBe(2);
  });

  it('refuses bad input with a typed error naming the field, and writes nothing', async () => {
    const name = await effectsTable();
    const run = (ctx: unknown, options: Record<string, unknown> = {}) =>
      fencedTransaction(driver.db(t) as never, ctx as never, async () => 1, { table: `ledger_${name}`, ...options });
    await expect(run(job(-1))).rejects.toMatchObject({ name: 'EffectInputError', field: 'ctx.fence' });
    await expect(run(job(1.5))).rejects.toBeInstanceOf(EffectInputError);
    await expect(run(job(1), { key: '' })).rejects.toMatchObject({ field: 'key' });
    await expect(run(job(1), { mode: 'twice' })).rejects.toMatchObject({ field: 'mode' });
    await expect(run(job(1), { table: 'ledger; drop table x' })).rejects.toMatchObject({ field: 'table' });
    await expect(run(undefined)).rejects.toMatchObject({ field: 'ctx' });
    const created = await driver.run(t, `select count(*)::int as n from pg_tables where tablename = $1`, [`ledger_${name}`]);
    expect(created).toEqual([{ n: 0 }]);
  });
});
