import { describe, expect, it } from 'vitest';
import { parseWorkerId, type JobId, type WorkerId } from '../../ids';
import type { LendCheck } from '../../fairshare/lend-check';
import type { Grant, NewJob } from '../../store';
import type { ContractContext } from './context';
import { LONG_TTL_MS, SHARD_COUNT, spec, unique } from './fixtures';
import { completeJob, grantLeases, startRun } from './one-leader';

/** No share of its own: these checks test the reserve the node counted (the store's count is tested apart). */
const LIVE = { fraction: 0, minSlots: 0, liveWindowMs: 60_000 };

function readyJobs(n: number): NewJob[] {
  return Array.from({ length: n }, (_, i) => ({ taskId: `t${i}`, state: 'ready', maxAttempts: 3, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 }));
}

/**
 * The store contract's part on lending: a lent grant (one that takes its DAG above its cap)
 * is refused when it would leave the pool fewer free slots than its reserve, counted by the
 * leases the store records, whatever the node's view of its workers says.
 */
export function lendingContract(c: ContractContext): void {
  describe('lending', () => {
    /** Three registered workers of two slots each, a DAG in a fresh shard, and six ready jobs. */
    async function world() {
      const ids = ['a', 'b', 'c'].map((n) => parseWorkerId(unique(`lend-${n}`)));
      for (const id of ids) await c.store.registerWorker({ id, slots: 2, nodeId: null, session: `session-of-${id}`, credentialId: null });
      const { token, dagId } = await c.leadFreshShard();
      await c.store.putDag(spec(dagId), SHARD_COUNT);
      const run = await c.store.triggerRun(dagId);
      const jobs = await startRun(c.store, token, run.id, readyJobs(6));
      return { ids: ids as [WorkerId, WorkerId, WorkerId], token, jobs };
    }
    const grant = (jobId: JobId, workerId: WorkerId, lend?: LendCheck, lent = false): Grant => ({ jobId, workerId, ...(lend ? { lend } : {}), ...(lent ? { lent: true } : {}) });

    it('refuses the lent grants that would take the reserve, by the leases on record rather than the polls', async () => {
      const { ids, token, jobs } = await world();
      const [a, b, cw] = ids;
      // a holds both its slots in the store (its results have not landed), while its poll still says both are free.
      const first = await grantLeases(c.store, token, [grant(jobs[0]!.id, a), grant(jobs[1]!.id, a)], LONG_TTL_MS);
      expect(first).toHaveLength(2);
      const check: LendCheck = {
        pool: 'default',
        reserve: 2,
        ...LIVE,
        workers: ids.map((workerId) => ({ workerId, free: 2 })),
      };
      // Free by the store: 0 + 2 + 2 = 4; the batch's own grant within its cap takes one, the
      // reserve two, so one of the three loans fits.
      const granted = await grantLeases(
        c.store,
        token,
        [grant(jobs[2]!.id, b, check), grant(jobs[3]!.id, b, check, true), grant(jobs[4]!.id, cw, check, true), grant(jobs[5]!.id, cw, check, true)],
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t2', 't3']);
      // The refused jobs are still ready: once a's result lands, its slot counts and one more loan fits.
      await completeJob(c.store, { jobId: first[0]!.jobId, fence: first[0]!.fence, workerId: a, session: `session-of-${a}` }, { output: null });
      const after: LendCheck = {
        pool: 'default',
        reserve: 2,
        ...LIVE,
        workers: [
          { workerId: a, free: 1 },
          { workerId: cw, free: 2 },
        ],
      };
      const again = await grantLeases(c.store, token, [grant(jobs[4]!.id, cw, after, true), grant(jobs[5]!.id, cw, after, true)], LONG_TTL_MS);
      expect(again.map((g) => g.taskId)).toEqual(['t4']);
    });

    it("counts a worker's poll as the most it has free, and a worker the store does not know as none", async () => {
      const { ids, token, jobs } = await world();
      const [a, b] = ids;
      const stranger = parseWorkerId(unique('lend-unregistered'));
      // The store would give a and b four free slots, but their polls here say one each; the
      // unregistered worker's poll counts for nothing. Free 2, reserve 1: one loan.
      const check: LendCheck = {
        pool: 'default',
        reserve: 1,
        ...LIVE,
        workers: [
          { workerId: a, free: 1 },
          { workerId: b, free: 1 },
          { workerId: stranger, free: 5 },
        ],
      };
      const granted = await grantLeases(c.store, token, [grant(jobs[0]!.id, a, check, true), grant(jobs[1]!.id, b, check, true)], LONG_TTL_MS);
      expect(granted.map((g) => g.taskId)).toEqual(['t0']);
    });

    it("keeps the larger of the node's reserve and the share of the pool's live slots the store counts", async () => {
      const { token, jobs } = await world();
      // Four workers of a pool of their own, seen just now: 8 live slots, all free.
      const pool = unique('lendpool')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-');
      const ids = [0, 1, 2, 3].map((i) => parseWorkerId(unique(`lend-p${i}`)));
      for (const id of ids)
        await c.store.registerWorker({ id, slots: 2, nodeId: null, meta: { offer: { pool, labels: [], types: ['noop'] } }, session: `session-of-${id}`, credentialId: null });
      // A node that has just started counts a pool of 2 slots (a reserve of 1 at a half);
      // the store counts 8 live slots, a reserve of 4: of 8 free slots, 4 may be lent.
      const check: LendCheck = { pool, reserve: 1, fraction: 0.5, minSlots: 0, liveWindowMs: 60_000, workers: ids.map((workerId) => ({ workerId, free: 2 })) };
      const granted = await grantLeases(
        c.store,
        token,
        jobs.map((j, i) => grant(j.id, ids[i % 4]!, check, true)),
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t0', 't1', 't2', 't3']);
    });

    it('counts a worker holding a lease in the pool of the reserve, however long ago it was last seen', async () => {
      const { token, jobs } = await world();
      const pool = unique('lendheld')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-');
      const ids = [0, 1, 2, 3, 4].map((i) => parseWorkerId(unique(`lend-h${i}`)));
      for (const id of ids)
        await c.store.registerWorker({ id, slots: 2, nodeId: null, meta: { offer: { pool, labels: [], types: ['noop'] } }, session: `session-of-${id}`, credentialId: null });
      const [busy, , ...idle] = ids as [WorkerId, WorkerId, WorkerId, WorkerId, WorkerId];
      // busy holds both its slots; then no node writes its last_seen for longer than the live
      // window (as when the node it talks to is paused), while the idle workers poll again.
      const held = await grantLeases(c.store, token, [grant(jobs[0]!.id, busy), grant(jobs[1]!.id, busy)], LONG_TTL_MS);
      expect(held).toHaveLength(2);
      await c.h.advanceMs(2_500);
      await c.store.heartbeatWorkers(
        idle.map((workerId) => ({ workerId, silentMs: 0 })),
        null,
      );
      // Seen within the window: the three idle workers, 6 slots, a reserve of 3 at a half;
      // with busy, whose leases show it is in the pool, 8 slots and a reserve of 4. Of the
      // idle workers' 6 free slots 2 may be lent, not 3. The second worker, silent and
      // holding nothing, counts in neither.
      const check: LendCheck = { pool, reserve: 1, fraction: 0.5, minSlots: 0, liveWindowMs: 2_000, workers: idle.map((workerId) => ({ workerId, free: 2 })) };
      const granted = await grantLeases(
        c.store,
        token,
        jobs.slice(2).map((j, i) => grant(j.id, idle[i % 3]!, check, true)),
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t2', 't3']);
    });

    it('counts a worker the check lists as waiting in the pool of the reserve, however long ago it was last seen', async () => {
      const { token, jobs } = await world();
      const pool = unique('lendwait')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-');
      const ids = [0, 1, 2, 3].map((i) => parseWorkerId(unique(`lend-w${i}`)));
      for (const id of ids)
        await c.store.registerWorker({ id, slots: 2, nodeId: null, meta: { offer: { pool, labels: [], types: ['noop'] } }, session: `session-of-${id}`, credentialId: null });
      const [stale, , ...fresh] = ids as [WorkerId, WorkerId, WorkerId, WorkerId];
      // stale waits on the node, but its last_seen is not written for longer than the live
      // window (as when the node that records it has just won its shards back); the fresh
      // workers' heartbeats land.
      await c.h.advanceMs(2_500);
      await c.store.heartbeatWorkers(
        fresh.map((workerId) => ({ workerId, silentMs: 0 })),
        null,
      );
      // The check counts the free slots of all three waiting workers, 6; by last_seen alone
      // the pool is the fresh workers' 4 slots, a reserve of 2 at a half, and 4 loans would
      // fit. With stale in the pool, 6 slots and a reserve of 3: 3 loans fit. The second
      // worker, silent and not waiting, counts in neither.
      const waiting = [stale, ...fresh];
      const check: LendCheck = { pool, reserve: 1, fraction: 0.5, minSlots: 0, liveWindowMs: 2_000, workers: waiting.map((workerId) => ({ workerId, free: 2 })) };
      const granted = await grantLeases(
        c.store,
        token,
        jobs.slice(0, 4).map((j, i) => grant(j.id, waiting[i % 3]!, check, true)),
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t0', 't1', 't2']);
    });

    it("keeps the reserve's floor in slots, counted from the pool's live slots the store counts", async () => {
      const { token, jobs } = await world();
      // Eight workers of a pool of their own, seen just now: 16 live slots. The node counts
      // no reserve (it has heard from none of them yet); the floor of 5 is held to an eighth
      // of the 16, so the store keeps 2 of the 4 free slots the check lists, and lends 2.
      const pool = unique('lendfloor')
        .toLowerCase()
        .replace(/[^a-z0-9-]/g, '-');
      const ids = Array.from({ length: 8 }, (_, i) => parseWorkerId(unique(`lend-f${i}`)));
      for (const id of ids)
        await c.store.registerWorker({ id, slots: 2, nodeId: null, meta: { offer: { pool, labels: [], types: ['noop'] } }, session: `session-of-${id}`, credentialId: null });
      const listed = ids.slice(0, 2);
      const check: LendCheck = { pool, reserve: 0, fraction: 0, minSlots: 5, liveWindowMs: 60_000, workers: listed.map((workerId) => ({ workerId, free: 2 })) };
      const granted = await grantLeases(
        c.store,
        token,
        jobs.map((j, i) => grant(j.id, listed[i % 2]!, check, true)),
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t0', 't1']);
    });

    it('never refuses a grant within its cap, even one that takes the reserve', async () => {
      const { ids, token, jobs } = await world();
      // No worker is free by the check, yet grants that lend nothing all land: the reserve is kept for them.
      const check: LendCheck = { pool: 'default', reserve: 6, ...LIVE, workers: [] };
      const granted = await grantLeases(
        c.store,
        token,
        ids.map((w, i) => grant(jobs[i]!.id, w, check)),
        LONG_TTL_MS,
      );
      expect(granted.map((g) => g.taskId)).toEqual(['t0', 't1', 't2']);
    });
  });
}
