import { PerformanceObserver } from 'node:perf_hooks';

/**
 * A pause at least this long is counted on its own: it is as long as the whole dispatch
 * latency the scheduler aims for at p99, so one of them is enough to explain a slow job.
 */
export const LONG_PAUSE_MS = 50;

/** How often the event-loop probe asks to run; how late it runs is the loop's delay. */
export const LOOP_PROBE_INTERVAL_MS = 20;

/** Counters of the process's own pauses, in the /metrics names (prefixed `fenceline_` there). */
export type RuntimeCounters = {
  runtime_gc_pauses_total: number;
  runtime_gc_pause_ms_total: number;
  runtime_gc_long_pauses_total: number;
  runtime_eventloop_stalls_total: number;
  runtime_eventloop_stall_ms_total: number;
  runtime_heap_used_bytes: number;
  runtime_rss_bytes: number;
};

export interface RuntimeMetrics {
  snapshot(): RuntimeCounters;
  stop(): void;
}

/**
 * Watches the scheduler process itself, so a slow dispatch can be told apart from a slow
 * store: garbage-collection pauses (from V8's own gc entries) and event-loop stalls (a
 * probe every LOOP_PROBE_INTERVAL_MS that runs LONG_PAUSE_MS or more late counts one
 * stall, and the stall's length beyond its due time). The probe's timer does not keep the
 * process alive. Counters only grow, so a reader takes the difference over its window.
 */
export function startRuntimeMetrics(now: () => number = () => performance.now()): RuntimeMetrics {
  const counts = { gcPauses: 0, gcPauseMs: 0, gcLongPauses: 0, stalls: 0, stallMs: 0 };
  const gc = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      counts.gcPauses++;
      counts.gcPauseMs += entry.duration;
      if (entry.duration >= LONG_PAUSE_MS) counts.gcLongPauses++;
    }
  });
  gc.observe({ entryTypes: ['gc'] });
  let due = now() + LOOP_PROBE_INTERVAL_MS;
  const probe = setInterval(() => {
    const at = now();
    const lateMs = at - due;
    if (lateMs >= LONG_PAUSE_MS) {
      counts.stalls++;
      counts.stallMs += lateMs;
    }
    due = at + LOOP_PROBE_INTERVAL_MS;
  }, LOOP_PROBE_INTERVAL_MS);
  probe.unref();
  return {
    snapshot: () => {
      const memory = process.memoryUsage();
      return {
        runtime_gc_pauses_total: counts.gcPauses,
        runtime_gc_pause_ms_total: Math.round(counts.gcPauseMs * 10) / 10,
        runtime_gc_long_pauses_total: counts.gcLongPauses,
        runtime_eventloop_stalls_total: counts.stalls,
        runtime_eventloop_stall_ms_total: Math.round(counts.stallMs),
        runtime_heap_used_bytes: memory.heapUsed,
        runtime_rss_bytes: memory.rss,
      };
    },
    stop: () => {
      clearInterval(probe);
      gc.disconnect();
    },
  };
}
