import { afterEach, describe, expect, it } from 'vitest';
import { parseDagId, parseWorkerId, type RunId, type Timers } from '@fenceline/core';
import { isRevocation, SchedulerNode, type Assignment } from '@fenceline/core/engine';
import { RecordingTracing } from '@fenceline/core/testing/tracing';
import { memoryStore } from '../src/store/memory-store';

const timers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};
const workerId = parseWorkerId('w-1');
const session = 'session-1';

let node: SchedulerNode | null = null;
afterEach(async () => {
  await node?.stop();
  node = null;
});

async function until<T>(what: string, probe: () => Promise<T | null | undefined>, withinMs = 5_000): Promise<T> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A node leading the one shard of a memory store, with a worker registered on it that a
 * test drives through the node's worker protocol: one run of a two-task chain, each job
 * polled and completed in turn. Returns the leases as the worker received them.
 */
async function runChain(tracing: RecordingTracing | undefined): Promise<{ leases: Assignment[]; runId: RunId }> {
  const store = memoryStore({ nowMs: () => Date.now() });
  await store.initCluster(1);
  await store.putDag(
    {
      id: 'traced',
      tasks: [
        { id: 'first', type: 'noop' },
        { id: 'second', type: 'noop', dependsOn: ['first'] },
      ],
    },
    1,
  );
  node = new SchedulerNode({
    nodeId: 'n1',
    store,
    clock: { nowMs: () => Date.now() },
    timers,
    config: { shardCount: 1, tickIntervalMs: 20, shardLeaseTtlMs: 2_000, shardRenewIntervalMs: 500 },
    ...(tracing ? { tracing } : {}),
  });
  await node.start();
  await node.protocol.register({ workerId, session, slots: 1, credentialId: null });
  const run = await store.triggerRun(parseDagId('traced'));
  const leases: Assignment[] = [];
  for (let i = 0; i < 2; i++) {
    const items = await node.protocol.poll({ workerId, session, slots: 1, freeSlots: 1, waitMs: 2_000 });
    const lease = items.find((item): item is Assignment => !isRevocation(item));
    if (!lease) throw new Error(`poll ${i} was answered without a lease`);
    leases.push(lease);
    await node.protocol.complete({ workerId, session, jobId: lease.jobId, fence: lease.fence });
  }
  await until('the run to succeed', async () => (await store.getRun(run.id)).state === 'succeeded');
  return { leases, runId: run.id };
}

describe('a scheduler node tracing runs and job attempts', () => {
  it('makes no span and sends no trace context when tracing is off', async () => {
    const off = new RecordingTracing(false);
    const { leases } = await runChain(off);
    expect(off.spans).toEqual([]);
    expect(leases.every((l) => !('traceparent' in l))).toBe(true);
  });

  it('makes no span without a tracing port at all, as the simulator runs it', async () => {
    const { leases } = await runChain(undefined);
    expect(leases.every((l) => !('traceparent' in l))).toBe(true);
  });

  it('puts each job attempt under its run, with its steps, and sends the attempt its lease carries', async () => {
    const tracing = new RecordingTracing();
    const { leases, runId } = await runChain(tracing);
    const [run] = tracing.named('fenceline.run');
    expect(run?.attributes['fenceline.run.id']).toBe(runId);
    await until('the run span to end', async () => run!.ended);
    expect(run!.attributes['fenceline.run.state']).toBe('succeeded');
    const attempts = tracing.named('fenceline.job.attempt');
    expect(attempts.map((a) => a.attributes['fenceline.task.id'])).toEqual(['first', 'second']);
    for (const [i, attempt] of attempts.entries()) {
      expect(attempt.parentSpanId).toBe(run!.spanId);
      expect(attempt.traceId).toBe(run!.traceId);
      expect(attempt.events.map((e) => e.name)).toEqual(['ready', 'leased', 'delivered', 'result']);
      expect(attempt.ended).toBe(true);
      expect(attempt.attributes['fenceline.job.state']).toBe('succeeded');
      expect(leases[i]!.traceparent).toBe(attempt.traceparent());
    }
    expect(tracing.named('fenceline.tick').length).toBeGreaterThan(0);
  });
});
