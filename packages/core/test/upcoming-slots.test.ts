import { describe, expect, it } from 'vitest';
import type { Timers } from '../src/clock';
import { UpcomingSlots } from '../src/engine/upcoming-slots';
import type { DueDag } from '../src/store';
import { asDagId } from './literal-ids';

/** Timers fired by hand, in order of due time. */
function manualTimers(): Timers & { fireUntil(ms: number): void } {
  let nowMs = 0;
  const pending: { atMs: number; fn: () => void; cancelled: boolean }[] = [];
  return {
    after(delayMs, fn) {
      const t = { atMs: nowMs + delayMs, fn, cancelled: false };
      pending.push(t);
      return () => void (t.cancelled = true);
    },
    fireUntil(ms) {
      nowMs = ms;
      for (const t of pending.filter((p) => p.atMs <= ms && !p.cancelled).sort((a, b) => a.atMs - b.atMs)) {
        t.cancelled = true;
        t.fn();
      }
    },
  };
}

const due = (id: string, atMs: number): DueDag => ({ id: asDagId(id), shard: 0, version: 1, spec: {} as DueDag['spec'], nextRunAt: new Date(atMs) });

describe('UpcomingSlots', () => {
  it('releases each slot instant once, with every DAG held for it, and lists it as held until the release settles', async () => {
    const timers = manualTimers();
    const released: { atMs: number; ids: string[] }[] = [];
    let finish: () => void = () => undefined;
    const slots = new UpcomingSlots(
      timers,
      (storeMs) => storeMs,
      async (atMs, dags) => {
        released.push({ atMs, ids: dags.map((d) => d.id) });
        await new Promise<void>((resolve) => (finish = resolve));
      },
    );
    slots.hold(due('a', 1_000));
    slots.hold(due('b', 1_000));
    slots.hold(due('a', 1_000)); // read again by a later tick: held once
    slots.hold(due('c', 2_000));
    expect(slots.size).toBe(3);
    expect(slots.has(due('a', 1_000))).toBe(true);
    expect(slots.has(due('a', 2_000))).toBe(false);
    expect(slots.heldInstants(10).map((d) => d.getTime())).toEqual([1_000, 2_000]);
    expect(slots.heldInstants(1).map((d) => d.getTime())).toEqual([1_000]);

    timers.fireUntil(1_000);
    expect(released).toEqual([{ atMs: 1_000, ids: ['a', 'b'] }]);
    // Being released still counts as held: a tick must not create these runs again.
    expect(slots.has(due('b', 1_000))).toBe(true);
    expect(slots.heldInstants(10).map((d) => d.getTime())).toEqual([1_000, 2_000]);
    finish();
    await new Promise((resolve) => setImmediate(resolve));
    expect(slots.has(due('b', 1_000))).toBe(false);
    expect(slots.heldInstants(10).map((d) => d.getTime())).toEqual([2_000]);

    slots.clear();
    timers.fireUntil(5_000);
    expect(released).toHaveLength(1);
    expect(slots.size).toBe(0);
    expect(slots.heldInstants(10)).toEqual([]);
  });
});
