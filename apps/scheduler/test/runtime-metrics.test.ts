import { describe, expect, it } from 'vitest';
import { LONG_PAUSE_MS, LOOP_PROBE_INTERVAL_MS, startRuntimeMetrics } from '../src/runtime-metrics';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Keeps the event loop busy for `ms`, as a long synchronous stretch of scheduler work would. */
function block(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    // spin
  }
}

describe('scheduler runtime metrics', () => {
  it('counts an event-loop stall of at least LONG_PAUSE_MS, with its length', async () => {
    const runtime = startRuntimeMetrics();
    try {
      await sleep(LOOP_PROBE_INTERVAL_MS * 5);
      const before = runtime.snapshot();
      block(LONG_PAUSE_MS * 3);
      await sleep(LOOP_PROBE_INTERVAL_MS * 3);
      const after = runtime.snapshot();
      // One block is one stall; a busy machine may delay a later probe into a second one.
      const stalls = after.runtime_eventloop_stalls_total - before.runtime_eventloop_stalls_total;
      expect(stalls).toBeGreaterThanOrEqual(1);
      expect(stalls).toBeLessThanOrEqual(2);
      // The probe due just after the block started runs at its end, LONG_PAUSE_MS * 3 - one interval late at least.
      const stalledMs = after.runtime_eventloop_stall_ms_total - before.runtime_eventloop_stall_ms_total;
      expect(stalledMs).toBeGreaterThanOrEqual(LONG_PAUSE_MS * 3 - LOOP_PROBE_INTERVAL_MS);
    } finally {
      runtime.stop();
    }
  });

  it('does not count the probe interval itself while the loop only waits', async () => {
    const runtime = startRuntimeMetrics();
    try {
      // Fifty probes: were each measured from the start rather than from its own due
      // time, nearly every one would count. A shared machine may still delay the odd
      // timer by a real stall.
      await sleep(LOOP_PROBE_INTERVAL_MS * 50);
      expect(runtime.snapshot().runtime_eventloop_stalls_total).toBeLessThan(5);
    } finally {
      runtime.stop();
    }
  });

  it('counts garbage-collection pauses and their time', async () => {
    const runtime = startRuntimeMetrics();
    try {
      const before = runtime.snapshot();
      // Enough short-lived garbage to fill the young generation many times over. Each object
      // escapes into a ring that later ones overwrite, so the optimiser cannot prove it dead
      // at birth and drop the allocation; with local arrays a clean CI run once saw no GC.
      const ring: unknown[] = new Array(1024);
      for (let i = 0; i < 2_000_000; i++) ring[i & 1023] = { i, pair: [i, i + 1] };
      expect(ring.filter(Boolean)).toHaveLength(1024);
      // V8 reports gc entries to observers asynchronously; wait for them, within a bound.
      let after = runtime.snapshot();
      for (let waitedMs = 0; after.runtime_gc_pauses_total === before.runtime_gc_pauses_total && waitedMs < 2_000; waitedMs += 50) {
        await sleep(50);
        after = runtime.snapshot();
      }
      expect(after.runtime_gc_pauses_total).toBeGreaterThan(before.runtime_gc_pauses_total);
      expect(after.runtime_gc_pause_ms_total).toBeGreaterThan(before.runtime_gc_pause_ms_total);
      expect(after.runtime_heap_used_bytes).toBeGreaterThan(0);
      expect(after.runtime_rss_bytes).toBeGreaterThan(after.runtime_heap_used_bytes);
    } finally {
      runtime.stop();
    }
  });
});
