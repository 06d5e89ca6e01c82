import { describe, expect, it } from 'vitest';
import { parseDagId, parseWorkerId, type RunId } from '@fenceline/core';
import { type PollItem } from '@fenceline/core/engine';
import { leadingNode } from './leading-node';

async function until<T>(what: string, check: () => Promise<T | null | false> | T | null | false, withinMs = 10_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** A node leading the one shard of a memory store, and a worker identity registered with it that runs nothing by itself. */
async function nodeAndWorker() {
  const { store, node } = await leadingNode();
  const worker = { workerId: parseWorkerId('w1'), session: 'w1-session' };
  await node.protocol.register({ ...worker, slots: 4, credentialId: null });
  const poll = (free: number): Promise<PollItem[]> => node.protocol.poll({ ...worker, slots: 4, freeSlots: free, waitMs: 2_000 });
  return { store, node, worker, poll };
}

describe("a shard leader applying operators' actions", () => {
  it('cancels a running run, revokes its lease and tells the holder at once on its open poll', async () => {
    const { store, node, worker, poll } = await nodeAndWorker();
    await store.putDag(
      {
        id: 'chain',
        tasks: [
          { id: 'a', type: 'noop' },
          { id: 'b', type: 'noop', dependsOn: ['a'] },
        ],
      },
      1,
    );
    const run = await store.triggerRun(parseDagId('chain'));
    const [lease] = await until('a lease for a', async () => {
      const items = await poll(4);
      return items.length > 0 ? items : null;
    });
    expect(lease).toMatchObject({ taskId: 'a' });
    const open = poll(3);
    await store.requestRunAction({ runId: run.id, kind: 'cancel', requestedBy: 'ops' });
    // The open poll is answered with the revocation, under the fence the cancel raised.
    expect(await open).toEqual([{ revoked: true, jobId: lease!.jobId, fence: lease!.fence + 1 }]);
    await until('the run cancelled', async () => (await store.getRun(run.id)).state === 'cancelled');
    expect((await store.listJobs(run.id)).map((j) => j.state)).toEqual(['cancelled', 'cancelled']);
    // The node answers a refused write without its reason: the lease is lost to this worker.
    await expect(node.protocol.complete({ ...worker, jobId: lease!.jobId, fence: lease!.fence })).rejects.toMatchObject({ code: 'LEASE_LOST' });
  });

  it('leaves a queued run queued when an action on it changes nothing, and starts it once a slot frees', async () => {
    const { store, poll } = await nodeAndWorker();
    await store.putDag({ id: 'one-at-a-time', maxActiveRuns: 1, tasks: [{ id: 'a', type: 'noop' }] }, 1);
    const first = await store.triggerRun(parseDagId('one-at-a-time'));
    const second = await store.triggerRun(parseDagId('one-at-a-time'));
    await until('a lease of the first run', async () => ((await poll(4)).length > 0 ? true : null));
    expect((await store.getRun(second.id)).state).toBe('queued');
    const clear = await store.requestRunAction({ runId: second.id, kind: 'clear', taskIds: ['a'], requestedBy: 'ops' });
    const applied = await until('the clear applied', async () => {
      const a = await store.getRunAction(clear.id);
      return a.state === 'applied' ? a : null;
    });
    expect(applied.result).toMatchObject({ changed: [], runState: 'queued', note: expect.stringContaining('has not started') });
    await store.requestRunAction({ runId: first.id, kind: 'cancel', requestedBy: 'ops' });
    await until('the second run started', async () => (await store.getRun(second.id as RunId)).state === 'running');
  });
});
