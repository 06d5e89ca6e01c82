import { describe, expect, it } from 'vitest';
import { StoreClockEstimate } from '../src/engine/store-clock';

describe('StoreClockEstimate', () => {
  it('takes the midpoint of a round trip, and keeps the shortest round trip of the recent samples', () => {
    const est = new StoreClockEstimate(3);
    // The store runs 100 ms ahead. A short read: sent at 0, store read at 102, back at 4.
    est.sample({ sentMs: 0, storeMs: 102, receivedMs: 4 });
    expect(est.offsetMs).toBe(100);
    expect(est.rttMs).toBe(4);
    // A long read whose store time was taken near its start: midpoint 1,020, store 1,101.
    est.sample({ sentMs: 1_000, storeMs: 1_101, receivedMs: 1_040 });
    expect(est.offsetMs).toBe(100);
    // Once the short sample has aged out, the best of what is left is used.
    est.sample({ sentMs: 2_000, storeMs: 2_103, receivedMs: 2_010 });
    est.sample({ sentMs: 3_000, storeMs: 3_104, receivedMs: 3_006 });
    expect(est.offsetMs).toBe(101);
    expect(est.rttMs).toBe(6);
  });

  it('drops its samples when a clock is stepped, rather than trusting the old offset', () => {
    const est = new StoreClockEstimate();
    est.sample({ sentMs: 0, storeMs: 102, receivedMs: 4 }); // offset 100, round trip 4
    est.sample({ sentMs: 1_000, storeMs: 1_120, receivedMs: 1_040 }); // a slow read, still consistent: offset 100 in [80, 120]
    expect(est.offsetMs).toBe(100);
    // The local clock steps back 5 s: the store now reads 5,100 ms ahead of it.
    est.sample({ sentMs: 2_000, storeMs: 7_110, receivedMs: 2_020 });
    expect(est.offsetMs).toBe(5_100);
    expect(est.rttMs).toBe(20);
    est.sample({ sentMs: 3_000, storeMs: 8_102, receivedMs: 3_004 });
    expect(est.offsetMs).toBe(5_100);
    expect(est.rttMs).toBe(4);
  });
});
