import { EventQueue, type Scheduled } from './event-queue';
import { runSteps } from './steps';
import { Trace } from './trace';

/** More events than this at one virtual millisecond means a livelock, not a busy moment. */
const MAX_EVENTS_PER_INSTANT = 200_000;
/**
 * Cancelled events stay in the queue until their time comes, and most timers are
 * cancelled (every call's timeout, every held poll's wait): once they are this many and
 * outnumber the live ones, the queue is rebuilt without them, so it stays as small as
 * what is really pending.
 */
const COMPACT_AFTER_CANCELLED = 4_096;

/** A delay in whole milliseconds, never negative; anything not a number is no delay. */
function delayOf(delayMs: number): number {
  return Number.isFinite(delayMs) ? Math.max(0, Math.round(delayMs)) : 0;
}

/**
 * The discrete-event loop. Events run in order of virtual time, then of the order they
 * were scheduled in (a sequence number), so two runs of the same seed execute the same
 * events in the same order, byte for byte. Before the next event starts, the host's
 * microtask queue is drained, so every promise continuation an event set off runs at that event's instant,
 * before anything later happens: `await store.x()` in the scheduler node behaves as it
 * would on a real machine whose clock stood still while the CPU worked.
 *
 * Virtual time is whole milliseconds since the Unix epoch: the store hands out Dates and
 * compares them for equality (next_run_at), so fractions would not survive a round trip.
 */
export class Simulation {
  private readonly queue = new EventQueue();
  private seq = 0;
  /** Cancelled events still in the queue. */
  private cancelledQueued = 0;
  private nowMsValue: number;
  private stopReason: string | null = null;
  readonly trace: Trace;
  /** Runs after every event (the invariant checker). Throwing stops the run. */
  afterEvent: (() => void) | null = null;
  /** How events are stepped (engine/steps.ts); a test asks for a macrotask per event to compare the two ways. */
  stepOptions: { macrotaskPerStep?: boolean } = {};

  constructor(startMs: number, traceKeep = 200) {
    this.nowMsValue = startMs;
    this.trace = new Trace(traceKeep);
  }

  get nowMs(): number {
    return this.nowMsValue;
  }

  get pending(): number {
    return this.queue.size;
  }

  get eventCount(): number {
    return this.trace.count;
  }

  /** Schedules `fn` after `delayMs` of true (store) time; returns a function that cancels it. */
  after(delayMs: number, label: string, fn: () => void): () => void {
    return this.cancellable(this.schedule(this.nowMsValue + delayOf(delayMs), label, fn));
  }

  /** As `after`, for an event nobody will cancel (a message on its way): no cancel function is made. */
  post(delayMs: number, label: string, fn: () => void): void {
    this.schedule(this.nowMsValue + delayOf(delayMs), label, fn);
  }

  at(atMs: number, label: string, fn: () => void): () => void {
    return this.cancellable(this.schedule(atMs, label, fn));
  }

  private schedule(atMs: number, label: string, fn: () => void): Scheduled {
    const event: Scheduled = { atMs: Math.max(this.nowMsValue, Math.round(atMs)), seq: this.seq++, label, fn, cancelled: false };
    this.queue.push(event);
    return event;
  }

  private cancellable(event: Scheduled): () => void {
    return () => {
      if (event.cancelled) return;
      event.cancelled = true;
      // An event that already ran is no longer queued; only a pending one counts.
      if (event.seq >= 0) this.noteCancelled();
    };
  }

  private noteCancelled(): void {
    this.cancelledQueued++;
    if (this.cancelledQueued >= COMPACT_AFTER_CANCELLED && this.cancelledQueued * 2 > this.queue.size) {
      this.queue.retain((e) => !e.cancelled);
      this.cancelledQueued = 0;
    }
  }

  /** Asks the loop to stop after the current event. */
  stop(reason: string): void {
    this.stopReason ??= reason;
  }

  get stopped(): string | null {
    return this.stopReason;
  }

  /**
   * Runs events up to and including `untilMs`, then sets the clock to `untilMs`.
   * `onProgress` is called about every `progressEveryMs` of virtual time. Each event runs
   * once every promise continuation of the one before it has run (engine/steps.ts).
   */
  async runUntil(untilMs: number, onProgress?: (nowMs: number) => void, progressEveryMs = 60_000): Promise<void> {
    let nextProgress = this.nowMsValue + progressEveryMs;
    let sameInstant = 0;
    /** An event ran in the previous step: its continuations are done, so it can be judged. */
    let ran = false;
    await runSteps(() => {
      if (ran) {
        ran = false;
        this.afterEvent?.();
        if (onProgress && this.nowMsValue >= nextProgress) {
          nextProgress = this.nowMsValue + progressEveryMs;
          onProgress(this.nowMsValue);
        }
      }
      while (this.stopReason === null) {
        const top = this.queue.peek();
        if (!top || top.atMs > untilMs) return false;
        this.queue.pop();
        if (top.cancelled) {
          this.cancelledQueued--;
          continue;
        }
        // Marks the event as run, so cancelling it later does not count it as queued.
        top.seq = -1;
        // A world that keeps scheduling work at one instant would never let time move on:
        // stop it with the culprit named rather than spin forever.
        sameInstant = top.atMs === this.nowMsValue ? sameInstant + 1 : 0;
        if (sameInstant > MAX_EVENTS_PER_INSTANT)
          throw new Error(`livelock: more than ${MAX_EVENTS_PER_INSTANT} events at ${new Date(top.atMs).toISOString()} without time moving on; the last was "${top.label}"`);
        this.nowMsValue = top.atMs;
        this.trace.addEvent(top.atMs, top.label);
        top.fn();
        ran = true;
        return true;
      }
      return false;
    }, this.stepOptions);
    if (this.stopReason === null) this.nowMsValue = Math.max(this.nowMsValue, untilMs);
  }
}
