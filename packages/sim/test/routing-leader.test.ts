import { describe, expect, it } from 'vitest';
import { parseDagId, parseWorkerId, workerOfferSchema, type WorkerOffer } from '@fenceline/core';
import { type Assignment, type PollItem, type SchedulerNode } from '@fenceline/core/engine';
import { leadingNode } from './leading-node';

/** A worker identity making `offer`, registered with the node; `poll` waits up to waitMs for leases. */
async function worker(node: SchedulerNode, id: string, offer: Partial<WorkerOffer>, slots = 4) {
  const ref = { workerId: parseWorkerId(id), session: `${id}-session` };
  const full = workerOfferSchema.parse(offer);
  await node.protocol.register({ ...ref, slots, offer: full, credentialId: null });
  return (free: number, waitMs = 300): Promise<PollItem[]> => node.protocol.poll({ ...ref, slots, freeSlots: free, waitMs, offer: full });
}

const leases = (items: PollItem[]): Assignment[] => items.filter((i): i is Assignment => !('revoked' in i));

describe('routing jobs to the workers that can run them', () => {
  it('a job of a pool no live worker serves waits, and runs once a worker of that pool polls', async () => {
    const { store, node } = await leadingNode();
    const plain = await worker(node, 'plain-1', {});
    await store.putDag({ id: 'train', tasks: [{ id: 'fit', type: 'noop', pool: 'gpu', labels: ['cuda'] }] }, 1);
    await store.triggerRun(parseDagId('train'));
    // Polls of a worker of the default pool get nothing, however often they come.
    for (let i = 0; i < 3; i++) expect(await plain(4)).toEqual([]);
    const [job] = (await store.listRuns({ dagId: parseDagId('train') })).map((r) => r.id);
    expect((await store.listJobs(job!)).map((j) => j.state)).toEqual(['ready']);
    // A GPU worker without the label gets nothing either; one with it gets the job.
    const unlabelled = await worker(node, 'gpu-1', { pool: 'gpu' });
    expect(await unlabelled(4)).toEqual([]);
    const labelled = await worker(node, 'gpu-2', { pool: 'gpu', labels: ['cuda', 'region=eu'] });
    const got = leases(await labelled(4, 2_000));
    expect(got.map((a) => a.taskId)).toEqual(['fit']);
  });

  it('a shell job never reaches a worker without shell', async () => {
    const { store, node } = await leadingNode();
    const noShell = await worker(node, 'safe-1', {});
    await store.putDag(
      {
        id: 'mixed',
        tasks: [
          { id: 'sh', type: 'shell', config: { command: 'true' } },
          { id: 'nap', type: 'noop' },
        ],
      },
      1,
    );
    await store.triggerRun(parseDagId('mixed'));
    const first = leases(await noShell(4, 2_000));
    expect(first.map((a) => a.taskId)).toEqual(['nap']);
    expect(await noShell(3)).toEqual([]);
    const shelly = await worker(node, 'shell-1', { types: ['noop', 'sleep', 'http', 'shell'] });
    expect(leases(await shelly(4, 2_000)).map((a) => a.taskId)).toEqual(['sh']);
  });

  it('lends slots beyond the cap while the pool keeps its reserve free', async () => {
    const strict = await leadingNode({ capFraction: 0.25, lendReserveFraction: null });
    const fleetStrict = await worker(strict.node, 'w-strict', {}, 20);
    await strict.store.putDag({ id: 'wide', tasks: Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, type: 'noop' })) }, 1);
    await strict.store.triggerRun(parseDagId('wide'));
    expect(leases(await fleetStrict(20, 2_000))).toHaveLength(5);

    const lending = await leadingNode({ capFraction: 0.25, lendReserveFraction: 0.2 });
    const fleetLending = await worker(lending.node, 'w-lend', {}, 20);
    await lending.store.putDag({ id: 'wide', tasks: Array.from({ length: 20 }, (_, i) => ({ id: `t${i}`, type: 'noop' })) }, 1);
    await lending.store.triggerRun(parseDagId('wide'));
    // 20 slots, a reserve of 4: 16 go to the one DAG, 11 of them lent.
    expect(leases(await fleetLending(20, 2_000))).toHaveLength(16);
  });

  it('lends no slot whose lease the store still records, whatever the poll says', async () => {
    const { store, node } = await leadingNode({ capFraction: 0.25, lendReserveFraction: 0.2 });
    const fleet = await worker(node, 'w-busy', {}, 20);
    await store.putDag({ id: 'wide', tasks: Array.from({ length: 30 }, (_, i) => ({ id: `t${i}`, type: 'noop' })) }, 1);
    await store.triggerRun(parseDagId('wide'));
    const first = leases(await fleet(20, 2_000));
    expect(first).toHaveLength(16);
    // The worker polls again with every slot free, as one whose jobs ended before their
    // results reached the node would. The store still records the 16 leases: only the
    // reserve's 4 slots are free there, so nothing may be lent, and nothing is.
    expect(await fleet(20, 300)).toEqual([]);
    expect(node.metrics.get('lends_refused_total')).toBeGreaterThan(0);
    // One result lands: one slot is free above the reserve by the store's records too, and
    // once the node's pause after the refusal has passed, exactly one more job is lent.
    await node.protocol.complete({ workerId: parseWorkerId('w-busy'), session: 'w-busy-session', jobId: first[0]!.jobId, fence: first[0]!.fence });
    const more: Assignment[] = [];
    for (let i = 0; i < 10 && more.length === 0; i++) more.push(...leases(await fleet(20, 300)));
    expect(more).toHaveLength(1);
  });

  it('never runs more jobs of a resource limit at once than it has units, across DAGs', async () => {
    const { store, node } = await leadingNode();
    await store.setResourceLimit({ name: 'warehouse', capacity: 2 });
    const fleet = await worker(node, 'big-1', {}, 10);
    for (const id of ['etl-a', 'etl-b']) {
      await store.putDag({ id, tasks: [...[0, 1, 2].map((i) => ({ id: `load${i}`, type: 'noop', resources: { warehouse: 1 } })), { id: 'free', type: 'noop' }] }, 1);
      await store.triggerRun(parseDagId(id));
    }
    // Eight ready jobs, ten free slots: the two unlimited ones and two limited ones run.
    const first = leases(await fleet(10, 2_000));
    const waitedFor = async (free: number): Promise<Assignment[]> => {
      const out: Assignment[] = [];
      for (let i = 0; i < 5 && out.length === 0; i++) out.push(...leases(await fleet(free, 300)));
      return out;
    };
    first.push(...(await waitedFor(10 - first.length)));
    expect(first.filter((a) => a.taskId === 'free')).toHaveLength(2);
    const limited = first.filter((a) => a.taskId !== 'free');
    expect(limited).toHaveLength(2);
    expect((await store.listResourceLimits())[0]).toMatchObject({ name: 'warehouse', used: 2, waiting: 4 });
    expect(await fleet(6, 300)).toEqual([]);
    // One result frees one unit, and exactly one more limited job is leased.
    await node.protocol.complete({ workerId: parseWorkerId('big-1'), session: 'big-1-session', jobId: limited[0]!.jobId, fence: limited[0]!.fence });
    const next = await waitedFor(7);
    expect(next).toHaveLength(1);
    expect((await store.listResourceLimits())[0]).toMatchObject({ used: 2, waiting: 3 });
  });
});
