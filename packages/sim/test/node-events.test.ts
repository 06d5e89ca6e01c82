import { afterEach, describe, expect, it } from 'vitest';
import { parseJobId, parseWorkerId, LIMITS, StoreUnavailableError, type Timers } from '@fenceline/core';
import { SchedulerNode } from '@fenceline/core/engine';
import { type NewEvent } from '@fenceline/core/store';
import { memoryStore, type MemoryStore, type MemoryStoreOptions } from '../src/store/memory-store';

/** The memory store, whose event log refuses the next `failures` appends, as a store that is away. */
type FlakyEventLog = MemoryStore & { failures: number };

function flakyEventLog(options: MemoryStoreOptions): FlakyEventLog {
  const store = memoryStore(options);
  const flaky: FlakyEventLog = {
    ...store,
    failures: 0,
    appendEvents: async (events: NewEvent[]) => {
      if (flaky.failures > 0) {
        flaky.failures--;
        throw new StoreUnavailableError('no reply within 5000 ms');
      }
      return store.appendEvents(events);
    },
  };
  return flaky;
}

const timers: Timers = {
  after(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    return () => clearTimeout(t);
  },
};

async function until(what: string, check: () => Promise<boolean> | boolean, withinMs = 5_000): Promise<void> {
  const deadline = Date.now() + withinMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

let node: SchedulerNode | null = null;
afterEach(async () => {
  await node?.stop();
  node = null;
});

/** A started node on a FlakyEventLog, flushing events every 10 ms, that counts what it emits. */
async function startedNode(): Promise<{ store: FlakyEventLog; node: SchedulerNode; emitted: () => number }> {
  const store = flakyEventLog({ nowMs: () => Date.now() });
  let emitted = 0;
  const started = new SchedulerNode({
    nodeId: 'node-1',
    store,
    clock: { nowMs: () => Date.now() },
    timers,
    config: { shardCount: 1, eventFlushIntervalMs: 10 },
    onEvent: () => emitted++,
  });
  node = started;
  await started.start();
  // The node's own events of its start are all written before the test's begin.
  await until('the first flush', async () => (await store.listEvents({ limit: 1_000 })).length === emitted && emitted > 0);
  return { store, node: started, emitted: () => emitted };
}

function renewal(n: number): NewEvent {
  return { type: 'lease:renewed', jobId: parseJobId(String(n + 1)), workerId: parseWorkerId('w-1'), fence: 1 };
}

describe('a scheduler node writing its events while the store is away', () => {
  it('keeps every event of the failed writes and writes them, in order, once the store is back', async () => {
    const { store, node } = await startedNode();
    store.failures = 3;
    for (let i = 0; i < 20; i++) node.emit(renewal(i));
    await until('three refused writes', () => store.failures === 0);
    for (let i = 20; i < 30; i++) node.emit(renewal(i));
    await until('all 30 events', async () => (await store.listEvents({ type: 'lease:renewed', limit: 100 })).length === 30);
    const written = await store.listEvents({ type: 'lease:renewed', limit: 100 });
    // The log's ids follow the order of the appends.
    expect([...written].sort((a, b) => Number(a.id) - Number(b.id)).map((e) => Number(e.jobId))).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    expect(node.metrics.get('loop_errors_total{loop="events"}')).toBe(3);
    expect(node.metrics.get('events_dropped_total')).toBe(0);
  });

  it('drops the oldest events beyond LIMITS.maxBufferedEvents and counts them', async () => {
    const { store, node, emitted } = await startedNode();
    store.failures = Number.POSITIVE_INFINITY;
    const before = emitted();
    for (let i = 0; i < LIMITS.maxBufferedEvents + 250; i++) node.emit(renewal(i));
    await until('a refused write', () => node.metrics.get('loop_errors_total{loop="events"}') > 0);
    // Counted after the refusal: the outage it began is an event of its own (store:unavailable).
    const buffered = emitted() - before;
    expect(node.metrics.get('events_dropped_total')).toBe(buffered - LIMITS.maxBufferedEvents);
    store.failures = 0;
    await until('the kept events', async () => (await store.listEvents({ type: 'lease:renewed', limit: 1 })).length > 0);
    // The newest were kept: the last event emitted is in the log, the first is not.
    const last = await store.listEvents({ type: 'lease:renewed', jobId: String(LIMITS.maxBufferedEvents + 250) });
    const first = await store.listEvents({ type: 'lease:renewed', jobId: '1' });
    expect([last.length, first.length]).toEqual([1, 0]);
  });
});
