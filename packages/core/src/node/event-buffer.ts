import { storableJson } from '../input/free-form';
import { LIMITS } from '../limits';
import type { NewEvent } from '../store';

/**
 * The node's events waiting to be written to the store's event log, oldest first. A batch
 * whose write fails goes back in front of what was buffered meanwhile, so an outage of the
 * store loses no event and keeps their order; the buffer holds at most `limit` events,
 * and beyond it the oldest are dropped (and counted), so a long outage cannot exhaust the
 * node's memory.
 *
 * All of a flush goes in one statement, so an event the store cannot keep would fail it
 * again and again, and every event with it: each event's data is made storable as it is
 * pushed (storableJson), since it can quote what a caller sent, such as a failure's error.
 */
export class EventBuffer {
  private events: NewEvent[] = [];
  /** The write in flight: a second flush waits for it, so a failed batch goes back in order. */
  private writing: Promise<void> | null = null;

  constructor(
    /** Told how many events were dropped, each time some are. */
    private readonly onDrop: (count: number) => void,
    private readonly limit: number = LIMITS.maxBufferedEvents,
  ) {}

  get size(): number {
    return this.events.length;
  }

  push(event: NewEvent): void {
    this.events.push(event.data === undefined ? event : { ...event, data: storableJson(event.data) as Record<string, unknown> });
    if (this.events.length > this.limit) this.dropOldest();
  }

  /** Writes everything buffered in one batch; on failure the batch is kept and the error rethrown. */
  async flush(write: (batch: NewEvent[]) => Promise<void>): Promise<void> {
    while (this.writing) await this.writing.catch(() => undefined);
    if (this.events.length === 0) return;
    const batch = this.events;
    this.events = [];
    this.writing = write(batch);
    try {
      await this.writing;
    } catch (err) {
      // Events emitted while the write was out are newer than the batch: they go after it.
      this.events = batch.concat(this.events);
      if (this.events.length > this.limit) this.dropOldest();
      throw err;
    } finally {
      this.writing = null;
    }
  }

  private dropOldest(): void {
    const excess = this.events.length - this.limit;
    this.events.splice(0, excess);
    this.onDrop(excess);
  }
}
