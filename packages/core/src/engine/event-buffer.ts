import { storableJson } from '../input/free-form';
import { LIMITS } from '../limits';
import type { NewEvent } from '../store';

/** A batch of events and the key it is written under, the same key every time it is sent. */
interface KeyedBatch {
  key: string;
  events: NewEvent[];
}

/**
 * The node's events waiting to be written to the store's event log, oldest first. A batch
 * whose write fails is sent again before what was buffered meanwhile, so an outage of the
 * store loses no event and keeps their order; the buffer holds at most `limit` events,
 * and beyond it the oldest are dropped (and counted), so a long outage cannot exhaust the
 * node's memory.
 *
 * Each batch carries a key of its own (the node's `keyPrefix` and a counter) and is sent
 * again under the same key, so a write that reached the store but whose answer was lost
 * (a failover cuts the connection after the commit) is kept once, not twice.
 *
 * All of a flush goes in one statement, so an event the store cannot keep would fail it
 * again and again, and every event with it: each event's data is made storable as it is
 * pushed (storableJson), since it can quote what a caller sent, such as a failure's error.
 */
export class EventBuffer {
  private events: NewEvent[] = [];
  /** The batch last sent whose write has not been answered with success. */
  private unsent: KeyedBatch | null = null;
  private nextBatch = 0;
  /** The write in flight: a second flush waits for it, so a failed batch goes again in order. */
  private writing: Promise<void> | null = null;

  constructor(
    /** Told how many events were dropped, each time some are. */
    private readonly onDrop: (count: number) => void,
    private readonly limit: number = LIMITS.maxBufferedEvents,
    /** Begins every batch key; it must differ between any two buffers writing to one store. */
    private readonly keyPrefix: string = '',
  ) {}

  get size(): number {
    return this.events.length + (this.unsent?.events.length ?? 0);
  }

  push(event: NewEvent): void {
    this.events.push(event.data === undefined ? event : { ...event, data: storableJson(event.data) as Record<string, unknown> });
    if (this.held() > this.limit) this.dropOldest();
  }

  /**
   * Writes the batch a failed write left, under its key, then everything buffered as one new
   * batch; on failure the failed batch is kept for the next flush and the error rethrown.
   */
  async flush(write: (batch: NewEvent[], batchKey: string) => Promise<void>): Promise<void> {
    while (this.writing) await this.writing.catch(() => undefined);
    for (;;) {
      const again = this.unsent !== null;
      if (!this.unsent) {
        if (this.events.length === 0) return;
        this.unsent = { key: `${this.keyPrefix}${this.nextBatch++}`, events: this.events };
        this.events = [];
      }
      const batch = this.unsent;
      this.writing = write(batch.events, batch.key);
      try {
        await this.writing;
        this.unsent = null;
      } finally {
        this.writing = null;
        // Events emitted while the write was out may have taken the buffer past its bound.
        if (this.held() > this.limit) this.dropOldest();
      }
      if (!again) return;
    }
  }

  /** The events the bound counts: a batch on its way to the store is not among them. */
  private held(): number {
    return this.writing ? this.events.length : this.size;
  }

  private dropOldest(): void {
    let excess = this.held() - this.limit;
    this.onDrop(excess);
    if (!this.writing && this.unsent) {
      const fromBatch = Math.min(excess, this.unsent.events.length);
      // A copy, not a splice: the batch's array may still be read by the write that sent it.
      const rest = this.unsent.events.slice(fromBatch);
      this.unsent = rest.length > 0 ? { key: this.unsent.key, events: rest } : null;
      excess -= fromBatch;
    }
    this.events.splice(0, excess);
  }
}
