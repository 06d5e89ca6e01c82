import { describe, expect, it } from 'vitest';
import type { WorkerRow } from '../../model';
import type { ContractContext } from './context';
import { LONG_TTL_MS, PAST_TTL_MS, SHORT_TTL_MS, unique } from './fixtures';
import { parseDagId, parseJobId, parseRunId, parseWorkerId } from '../../ids';

/** The store contract's part on workers, the event log and notices. */
export function workersAndEventsContract(c: ContractContext): void {
  describe('workers and the event log', () => {
    it('lists workers seen within a window; a heartbeat brings one back', async () => {
      const a = unique('worker');
      const b = unique('worker');
      await c.store.registerWorker({ id: parseWorkerId(a), slots: 4, nodeId: 'n1', meta: { host: 'x' }, session: `session-of-${a}`, credentialId: null });
      await c.store.registerWorker({ id: parseWorkerId(b), slots: 2, nodeId: null, session: `session-of-${b}`, credentialId: null });
      const seen = (await c.store.listWorkers(LONG_TTL_MS)).filter((w) => w.id === a || w.id === b);
      expect(seen.map((w) => w.id).sort()).toEqual([a, b].sort());
      expect(seen.find((w) => w.id === a)).toMatchObject({ slots: 4, nodeId: 'n1', meta: { host: 'x' } });
      await c.h.advanceMs(PAST_TTL_MS);
      await c.store.heartbeatWorkers([{ workerId: parseWorkerId(a), silentMs: 0 }], 'n2');
      const recent = (await c.store.listWorkers(SHORT_TTL_MS)).filter((w) => w.id === a || w.id === b);
      expect(recent.map((w) => [w.id, w.nodeId])).toEqual([[a, 'n2']]);
    });

    it("keeps a worker's offer (pool, labels, types) with its registration, the latest one winning", async () => {
      const id = parseWorkerId(unique('worker'));
      const offer = { pool: 'gpu', labels: ['cuda', 'region=eu'], types: ['noop', 'sleep', 'http', 'train'] };
      await c.store.registerWorker({ id, slots: 2, nodeId: 'n1', meta: { pid: 1, offer }, session: `session-of-${id}`, credentialId: null });
      expect((await c.store.listWorkers(LONG_TTL_MS)).find((w) => w.id === id)?.meta).toEqual({ pid: 1, offer });
      const moved = { ...offer, pool: 'default', labels: [] };
      await c.store.registerWorker({ id, slots: 2, nodeId: 'n2', meta: { pid: 2, offer: moved }, session: `session-of-${id}-2`, credentialId: null });
      expect((await c.store.listWorkers(LONG_TTL_MS)).find((w) => w.id === id)?.meta).toEqual({ pid: 2, offer: moved });
    });

    it('a heartbeat that skips recently seen workers writes only the stale ones', async () => {
      const fresh = unique('worker');
      const stale = unique('worker');
      await c.store.registerWorker({ id: parseWorkerId(stale), slots: 1, nodeId: 'n1', session: `session-of-${stale}`, credentialId: null });
      await c.h.advanceMs(PAST_TTL_MS);
      await c.store.registerWorker({ id: parseWorkerId(fresh), slots: 1, nodeId: 'n1', session: `session-of-${fresh}`, credentialId: null });
      const before = new Map<string, WorkerRow>((await c.store.listWorkers(LONG_TTL_MS)).map((w) => [w.id, w]));
      await c.store.heartbeatWorkers(
        [fresh, stale, unique('never-registered')].map((id) => ({ workerId: parseWorkerId(id), silentMs: 0 })),
        'n2',
        SHORT_TTL_MS,
      );
      const after = new Map<string, WorkerRow>((await c.store.listWorkers(LONG_TTL_MS)).map((w) => [w.id, w]));
      // The fresh row is untouched, node included; the stale one is seen now, by n2.
      expect(after.get(fresh)).toEqual(before.get(fresh));
      expect(after.get(stale)!.nodeId).toBe('n2');
      expect(after.get(stale)!.lastSeen.getTime()).toBeGreaterThan(before.get(stale)!.lastSeen.getTime());
      expect(
        (await c.store.listWorkers(SHORT_TTL_MS))
          .map((w): string => w.id)
          .filter((id) => id === fresh || id === stale)
          .sort(),
      ).toEqual([fresh, stale].sort());
    });

    it('records when a worker was last heard from, never later and never going back', async () => {
      const id = parseWorkerId(unique('worker'));
      await c.store.registerWorker({ id, slots: 1, nodeId: 'n1', session: `session-of-${id}`, credentialId: null });
      await c.h.advanceMs(PAST_TTL_MS);
      const lastSeen = async (): Promise<number> => (await c.store.listWorkers(LONG_TTL_MS)).find((w) => w.id === id)!.lastSeen.getTime();
      // Silent for 200 ms on this node: last_seen is 200 ms before the store's now, not now.
      const before = (await c.store.now()).getTime();
      await c.store.heartbeatWorkers([{ workerId: id, silentMs: 200 }], 'n2', LONG_TTL_MS);
      const after = (await c.store.now()).getTime();
      const heard = await lastSeen();
      expect(heard).toBeGreaterThanOrEqual(before - 200 - 1);
      expect(heard).toBeLessThanOrEqual(after - 200 + 1);
      // A node that heard from it earlier, later on, moves nothing back; the latest of two nodes' times wins.
      await c.h.advanceMs(100);
      await c.store.heartbeatWorkers([{ workerId: id, silentMs: 5_000 }], 'n3');
      expect(await lastSeen()).toBe(heard);
      expect((await c.store.listWorkers(LONG_TTL_MS)).find((w) => w.id === id)!.nodeId).toBe('n2');
      // A polling worker seen that recently is skipped; a silent one's later time is written whatever the skip.
      await c.store.heartbeatWorkers([{ workerId: id, silentMs: 0 }], 'n4', LONG_TTL_MS);
      expect(await lastSeen()).toBe(heard);
      await c.store.heartbeatWorkers([{ workerId: id, silentMs: 10 }], 'n4', LONG_TTL_MS);
      expect(await lastSeen()).toBeGreaterThan(heard);
    });

    it('appends events and reads them back in order', async () => {
      const type = unique('test:event');
      await c.store.appendEvents([
        { type, shard: 3, dagId: parseDagId('d'), runId: parseRunId('7'), jobId: parseJobId('8'), workerId: parseWorkerId('w'), nodeId: 'n', fence: 5, epoch: 2, data: { n: 1 } },
        { type, data: { n: 2 } },
      ]);
      const events = await c.store.listEvents({ type });
      expect(events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }]);
      expect(events[0]).toMatchObject({ shard: 3, dagId: 'd', runId: '7', jobId: '8', workerId: 'w', nodeId: 'n', fence: 5, epoch: 2 });
      expect(events[0]!.at).toBeInstanceOf(Date);
      expect(await c.store.listEvents({ type, afterId: events[0]!.id })).toEqual([events[1]]);
      expect((await c.store.listEvents({ runId: '7', type })).map((e) => e.data)).toEqual([{ n: 1 }]);
    });

    it('keeps a keyed batch once however often it is sent, and every batch without a key', async () => {
      const type = unique('test:keyed');
      const key = unique('node@1:');
      await c.store.appendEvents(
        [
          { type, data: { n: 1 } },
          { type, data: { n: 2 } },
        ],
        `${key}0`,
      );
      // The same batch again, as a node sends it after losing the answer, and a new one.
      await c.store.appendEvents(
        [
          { type, data: { n: 1 } },
          { type, data: { n: 2 } },
        ],
        `${key}0`,
      );
      await c.store.appendEvents([{ type, data: { n: 3 } }], `${key}1`);
      await c.store.appendEvents([{ type, data: { n: 4 } }]);
      await c.store.appendEvents([{ type, data: { n: 4 } }]);
      expect((await c.store.listEvents({ type })).map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }, { n: 4 }, { n: 4 }]);
    });

    it('keeps the time each event carries, to the millisecond, and stamps its own clock on one without', async () => {
      const type = unique('test:stamped');
      const now = await c.store.now();
      // Stamps out of order and well away from the store's clock, as a batch written late holds.
      const early = new Date(now.getTime() - 4_321);
      const later = new Date(now.getTime() - 1_234);
      const before = await c.store.now();
      await c.store.appendEvents([
        { type, at: later, data: { n: 1 } },
        { type, at: early, data: { n: 2 } },
        { type, data: { n: 3 } },
      ]);
      const after = await c.store.now();
      const events = await c.store.listEvents({ type });
      expect(events.map((e) => e.data)).toEqual([{ n: 1 }, { n: 2 }, { n: 3 }]);
      expect(events.slice(0, 2).map((e) => e.at.getTime())).toEqual([later.getTime(), early.getTime()]);
      expect(events[2]!.at.getTime()).toBeGreaterThanOrEqual(before.getTime());
      expect(events[2]!.at.getTime()).toBeLessThanOrEqual(after.getTime());
    });
  });
}
