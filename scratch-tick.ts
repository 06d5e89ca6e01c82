// Scratch (not committed): the store's own cost of a tick that creates 1,000 runs.
import { createDatabase, dropDatabase, openStore } from '@fenceline/db';
import { benchSpec, makeDue, seedBenchDags } from '@fenceline/db/bench';
import { sql } from 'drizzle-orm';
import { shardOf, type LeaderGroup, type ScheduledRunsItem } from '@fenceline/core';

const ADMIN = 'postgres://postgres@127.0.0.1:5432/postgres';
const name = `scratch_tick_${Date.now()}`;
const url = await createDatabase(ADMIN, name);
{
  const admin = await openStore({ databaseUrl: url, max: 1 });
  if (process.env.EXPLAIN) {
    await admin.db.execute(sql.raw(`alter database ${name} set session_preload_libraries = 'auto_explain'`));
    await admin.db.execute(sql.raw(`alter database ${name} set auto_explain.log_min_duration = 40`));
    await admin.db.execute(sql.raw(`alter database ${name} set auto_explain.log_analyze = on`));
    await admin.db.execute(sql.raw(`alter database ${name} set auto_explain.log_timing = off`));
  }
  await admin.close();
}
const store = await openStore({ databaseUrl: url, max: 8 });
const watcher = await openStore({ databaseUrl: url, max: 1 });
const waits = new Map<string, number>();
try {
  await store.initCluster(16);
  const tokens = [];
  for (let s = 0; s < 16; s++) tokens.push((await store.acquireShard(s, 'n1', 600_000))!.token);
  const ids = Array.from({ length: 100_000 }, (_, i) => `d-${i}`);
  const day = 86_400_000;
  const base = Date.now();
  await seedBenchDags(store.db, ids.map((id, i) => ({ id, nextRunAt: new Date(base + 3_600_000 + ((i * 864) % day)), spec: benchSpec(id, { tasks: [{ id: 'only', type: 'bench' }], schedule: { kind: 'interval', everyMs: day, anchor: '2026-01-01T00:00:00Z' } }) })), 16);
  const job = { taskId: 'only', state: 'ready' as const, maxAttempts: 3, priority: 0, retryBackoffMs: 1000, retryBackoffMaxMs: 60000, timeoutMs: 3_600_000 };
  const modes = (process.env.MODES ?? '1x1000,2x500,4x250').split(',');
  for (const [rep, mode] of modes.entries()) {
    const due = ids.slice(rep * 1000, rep * 1000 + 1000);
    const slot = new Date(base - 60_000 - rep * 1000);
    slot.setMilliseconds(0);
    await makeDue(store.db, due, due.map(() => slot));
    const items: ScheduledRunsItem[] = due.map((dagId) => ({ dagId, expectedNextRunAt: slot, slots: [slot], nextRunAt: new Date(slot.getTime() + day), start: { version: 1, jobs: [job] } }));
    const [n, size] = mode.split('x').map(Number) as [number, number];
    const parts: LeaderGroup<ScheduledRunsItem>[][] = [];
    for (let k = 0; k < n; k++) {
      const chunk = items.slice(k * size, (k + 1) * size);
      const byShard = new Map<number, ScheduledRunsItem[]>();
      for (const it of chunk) {
        const s = shardOf(it.dagId, 16);
        byShard.set(s, [...(byShard.get(s) ?? []), it]);
      }
      parts.push([...byShard].map(([s, its]) => ({ token: tokens[s]!, items: its })));
    }
    const t = performance.now();
    let watching = true;
    const watch = (async () => {
      while (watching) {
        const r = (await watcher.db.execute(sql`select wait_event_type, wait_event, state from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid() and state = 'active'`)) as unknown as { wait_event_type: string | null; wait_event: string | null }[];
        for (const w of r) { const k = `${w.wait_event_type ?? 'CPU'}:${w.wait_event ?? ''}`; waits.set(k, (waits.get(k) ?? 0) + 1); }
        await new Promise((res) => setTimeout(res, 2));
      }
    })();
    const out = await Promise.all(parts.map((groups) => store.createScheduledRunsAcross(groups)));
    watching = false;
    await watch;
    const ms = performance.now() - t;
    const created = out.flat().flatMap((g) => (Array.isArray(g) ? g.flat() : [])).length;
    console.log(`${mode}: ${created} runs created running in ${ms.toFixed(1)} ms; samples ${JSON.stringify(Object.fromEntries(waits))}`);
    waits.clear();
  }
} finally {
  await store.close();
  await watcher.close();
  await dropDatabase(ADMIN, name);
}
