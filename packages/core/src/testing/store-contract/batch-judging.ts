import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWorkerId, type JobId, type WorkerId } from '../../ids';
import type { LeaseRef, NewJob } from '../../store';
import type { ContractContext } from './context';
import { LONG_TTL_MS, SHARD_COUNT, unique } from './fixtures';
import { grantLeases, startRun } from './one-leader';

/**
 * The store contract's part on batches judged item by item: completions, failures,
 * hand-backs and renewals of many workers share one statement, and an item that names a live lease's job but fails
 * one of its checks (another session, another holder, another fence) must be refused
 * alone. Generated batches mix honest items (the holder's job, fence and session, some
 * named twice) with forged ones in any order; each item's answer must be what it would
 * get on its own, and only the first honest item of a job may write for it.
 */

/** How an item of a generated batch differs from its job's holder's own item. */
type Kind = 'honest' | 'intruder-session' | 'unknown-session' | 'neighbour-session' | 'other-holder' | 'stale-fence' | 'forged-fence';
const KINDS: Kind[] = ['honest', 'intruder-session', 'unknown-session', 'neighbour-session', 'other-holder', 'stale-fence', 'forged-fence'];

/** The answer an item must get: only an honest item is accepted, and a forged fence is named as such. */
function expectedCode(kind: Kind): string {
  if (kind === 'stale-fence') return 'STALE_FENCE';
  if (kind === 'forged-fence') return 'FORGED_FENCE';
  return 'LEASE_LOST';
}

const JOBS = 3;
const batches = fc.array(fc.record({ job: fc.integer({ min: 0, max: JOBS - 1 }), kind: fc.constantFrom(...KINDS) }), { minLength: 1, maxLength: 9 });
/** Few runs: each one sets up a run of its own in the store, and the SQL store pays a round trip per step. */
const RUNS = { numRuns: 12, seed: Number(process.env.FENCELINE_PROPERTY_SEED ?? Date.now() % 1_000_000) };

export function batchJudgingContract(c: ContractContext): void {
  describe('batches judged item by item', () => {
    /** JOBS jobs of one run, each leased to a worker of its own under its session, and a registered intruder. */
    async function leasedJobs() {
      const { token, dagId } = await c.leadFreshShard();
      const tasks = Array.from({ length: JOBS }, (_, k) => ({ id: `t${k}`, type: 'noop' }));
      await c.store.putDag({ id: dagId, tasks }, SHARD_COUNT);
      const run = await c.store.triggerRun(dagId);
      const common = { maxAttempts: 3, priority: 0, retryBackoffMs: 0, retryBackoffMaxMs: 0, timeoutMs: 60_000 };
      const jobs = await startRun(
        c.store,
        token,
        run.id,
        tasks.map((t): NewJob => ({ taskId: t.id, state: 'ready', ...common })),
      );
      const register = async (prefix: string) => {
        const id = parseWorkerId(unique(prefix));
        const session = `session-${unique('s')}`;
        await c.store.registerWorker({ id, slots: 1, nodeId: null, session, credentialId: null });
        return { id, session };
      };
      const holders: { id: WorkerId; session: string }[] = [];
      for (let k = 0; k < JOBS; k++) holders.push(await register(`batch-h${k}`));
      const intruder = await register('batch-x');
      const granted = await grantLeases(
        c.store,
        token,
        jobs.map((j, k) => ({ jobId: j.id, workerId: holders[k]!.id })),
        LONG_TTL_MS,
      );
      expect(granted).toHaveLength(JOBS);
      const leases = jobs.map((j, k) => ({ jobId: j.id, fence: granted.find((g) => g.jobId === j.id)!.fence, holder: holders[k]! }));
      return { leases, holders, intruder };
    }

    type Setup = Awaited<ReturnType<typeof leasedJobs>>;

    /** The reference an item of `kind` sends for lease `job`. */
    function refOf(s: Setup, job: number, kind: Kind): LeaseRef {
      const lease = s.leases[job]!;
      const own = { jobId: lease.jobId as JobId, fence: lease.fence, workerId: lease.holder.id as WorkerId, session: lease.holder.session };
      switch (kind) {
        case 'honest':
          return own;
        case 'intruder-session':
          return { ...own, session: s.intruder.session };
        case 'unknown-session':
          return { ...own, session: `never-registered-${job}` };
        case 'neighbour-session':
          return { ...own, session: s.holders[(job + 1) % JOBS]!.session };
        case 'other-holder':
          return { ...own, workerId: s.intruder.id, session: s.intruder.session };
        case 'stale-fence':
          return { ...own, fence: lease.fence - 1 };
        case 'forged-fence':
          return { ...own, fence: lease.fence + 1 };
      }
    }

    /** For each item, whether it is the first honest item of its job (the one that may write). */
    function firstHonest(items: { job: number; kind: Kind }[]): boolean[] {
      const taken = new Set<number>();
      return items.map((i) => {
        if (i.kind !== 'honest' || taken.has(i.job)) return false;
        taken.add(i.job);
        return true;
      });
    }

    it('completes only the first honest item of each job; every other item is refused alone', async () => {
      await fc.assert(
        fc.asyncProperty(batches, async (items) => {
          const s = await leasedJobs();
          const outcomes = await c.store.completeJobs(items.map((i, at) => ({ ref: refOf(s, i.job, i.kind), output: { item: at }, logs: `item ${at}` })));
          const wins = firstHonest(items);
          expect(outcomes).toHaveLength(items.length);
          outcomes.forEach((o, at) => {
            const item = items[at]!;
            expect(o.jobId, `item ${at}`).toBe(s.leases[item.job]!.jobId);
            if (wins[at]) expect(o.ok, `item ${at} (${item.kind}) must be accepted`).toBe(true);
            else expect(o.ok ? 'OK' : o.error.code, `item ${at} (${item.kind})`).toBe(expectedCode(item.kind));
          });
          for (let job = 0; job < JOBS; job++) {
            const lease = s.leases[job]!;
            const winner = items.findIndex((_, at) => wins[at] && items[at]!.job === job);
            const result = await c.store.getResult(lease.jobId);
            if (winner < 0) {
              expect(result, `job ${job} had no honest item`).toBeNull();
              expect(await c.store.getJob(lease.jobId)).toMatchObject({ state: 'leased', holder: lease.holder.id, fence: lease.fence });
            } else {
              expect(result).toMatchObject({ workerId: lease.holder.id, fence: lease.fence, output: { item: winner }, logs: `item ${winner}` });
              expect((await c.store.getJob(lease.jobId)).state).toBe('succeeded');
            }
          }
        }),
        RUNS,
      );
    });

    it('fails only the first honest item of each job; every other item is refused alone', async () => {
      await fc.assert(
        fc.asyncProperty(batches, async (items) => {
          const s = await leasedJobs();
          const outcomes = await c.store.failJobs(items.map((i, at) => ({ ref: refOf(s, i.job, i.kind), error: `error of item ${at}`, retryable: true, logs: `item ${at}` })));
          const wins = firstHonest(items);
          expect(outcomes).toHaveLength(items.length);
          outcomes.forEach((o, at) => {
            const item = items[at]!;
            expect(o.jobId, `item ${at}`).toBe(s.leases[item.job]!.jobId);
            if (wins[at]) expect(o.ok, `item ${at} (${item.kind}) must be accepted`).toBe(true);
            else expect(o.ok ? 'OK' : o.error.code, `item ${at} (${item.kind})`).toBe(expectedCode(item.kind));
          });
          for (let job = 0; job < JOBS; job++) {
            const lease = s.leases[job]!;
            const winner = items.findIndex((_, at) => wins[at] && items[at]!.job === job);
            const result = await c.store.getResult(lease.jobId);
            if (winner < 0) {
              expect(result, `job ${job} had no honest item`).toBeNull();
              expect(await c.store.getJob(lease.jobId)).toMatchObject({ state: 'leased', holder: lease.holder.id, fence: lease.fence });
            } else {
              expect(result).toMatchObject({ workerId: lease.holder.id, fence: lease.fence, outcome: 'failed', error: `error of item ${winner}`, logs: `item ${winner}` });
              expect(await c.store.getJob(lease.jobId)).toMatchObject({ state: 'ready', fence: lease.fence, lastError: `error of item ${winner}` });
            }
          }
        }),
        RUNS,
      );
    });

    it('hands back only the first honest item of each job; every other item is refused alone, named against the fence the batch left', async () => {
      await fc.assert(
        fc.asyncProperty(batches, async (items) => {
          const s = await leasedJobs();
          const outcomes = await c.store.releaseJobs(items.map((i) => refOf(s, i.job, i.kind)));
          const wins = firstHonest(items);
          const released = new Set(items.filter((_, at) => wins[at]).map((i) => i.job));
          expect(outcomes).toHaveLength(items.length);
          outcomes.forEach((o, at) => {
            const item = items[at]!;
            expect(o.jobId, `item ${at}`).toBe(s.leases[item.job]!.jobId);
            // Once a job is handed back its fence is one higher: the old fence is stale, and the forged one is now the record's.
            const code = !released.has(item.job) ? expectedCode(item.kind) : item.kind === 'forged-fence' ? 'LEASE_LOST' : 'STALE_FENCE';
            if (wins[at]) expect(o.ok, `item ${at} (${item.kind}) must be accepted`).toBe(true);
            else expect(o.ok ? 'OK' : o.error.code, `item ${at} (${item.kind})`).toBe(code);
          });
          for (let job = 0; job < JOBS; job++) {
            const lease = s.leases[job]!;
            const expected = released.has(job) ? { state: 'ready', holder: null, fence: lease.fence + 1 } : { state: 'leased', holder: lease.holder.id, fence: lease.fence };
            expect(await c.store.getJob(lease.jobId), `job ${job}`).toMatchObject(expected);
          }
        }),
        RUNS,
      );
    });

    it('renews every honest item and only those, and streams the first honest item’s lines only', async () => {
      await fc.assert(
        fc.asyncProperty(batches, async (items) => {
          const s = await leasedJobs();
          const outcomes = await c.store.renewLeases(
            items.map((i, at) => ({ ...refOf(s, i.job, i.kind), log: `line of item ${at}\n` })),
            LONG_TTL_MS,
          );
          expect(outcomes).toHaveLength(items.length);
          outcomes.forEach((o, at) => {
            const item = items[at]!;
            expect(o.jobId, `item ${at}`).toBe(s.leases[item.job]!.jobId);
            expect(o.ok ? 'OK' : o.code, `item ${at} (${item.kind})`).toBe(item.kind === 'honest' ? 'OK' : expectedCode(item.kind));
          });
          const wins = firstHonest(items);
          for (let job = 0; job < JOBS; job++) {
            const lease = s.leases[job]!;
            const winner = items.findIndex((_, at) => wins[at] && items[at]!.job === job);
            const lines = (await c.store.listLogChunks({ jobId: lease.jobId, fence: lease.fence })).map((x) => x.text);
            expect(lines, `job ${job}`).toEqual(winner < 0 ? [] : [`line of item ${winner}\n`]);
            expect(await c.store.getJob(lease.jobId)).toMatchObject({ state: 'leased', holder: lease.holder.id, fence: lease.fence });
          }
        }),
        RUNS,
      );
    });
  });
}
