/**
 * A node's estimate of the store's clock, from the store's `now` read with each due query.
 * Each read bounds the store's time to the round trip around it; its midpoint is the best
 * guess, off by at most half the round trip. A read that returns a thousand DAGs has a
 * long round trip whose store time was taken near its start, so the estimate keeps the
 * sample with the shortest round trip among the last few (as NTP filters its samples)
 * rather than the latest: slots are released by this estimate, and a long sample would
 * release them late by a good part of its round trip.
 *
 * Each sample bounds the offset to an interval (the store read its clock somewhere inside
 * the round trip). While neither clock jumps, all those intervals share the true offset;
 * a sample whose interval misses the kept one's means a clock was stepped, and the older
 * samples are dropped rather than trusted for up to `keep` more reads.
 */
export class StoreClockEstimate {
  private readonly samples: { offsetMs: number; rttMs: number }[] = [];
  private best = { offsetMs: 0, rttMs: 0 };

  constructor(private readonly keep = 8) {}

  /** One read: local time sent, the store's time in the answer, local time received. */
  sample({ sentMs, storeMs, receivedMs }: { sentMs: number; storeMs: number; receivedMs: number }): void {
    const rttMs = Math.max(0, receivedMs - sentMs);
    const offsetMs = Math.round(storeMs - (sentMs + receivedMs) / 2);
    // Half-widths plus a millisecond of rounding: the two intervals must overlap.
    if (this.samples.length > 0 && Math.abs(offsetMs - this.best.offsetMs) > (rttMs + this.best.rttMs) / 2 + 1) this.samples.length = 0;
    this.samples.push({ offsetMs, rttMs });
    if (this.samples.length > this.keep) this.samples.shift();
    this.best = this.samples.reduce((a, b) => (b.rttMs < a.rttMs ? b : a));
  }

  /** Store time minus local time, by the best recent sample. */
  get offsetMs(): number {
    return this.best.offsetMs;
  }

  /** The best sample's round trip: the estimate is off by at most half of it. */
  get rttMs(): number {
    return this.best.rttMs;
  }
}
