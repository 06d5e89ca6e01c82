import type { Clock, Timers } from '@fenceline/core';
import type { Simulation } from './simulation';

export type ProcessState = 'running' | 'paused' | 'crashed';

/**
 * One simulated machine process (a scheduler node or a worker). It owns the clock the
 * process believes in and the timers it sets, and it is the only door into the process:
 * timers firing, replies arriving and requests coming in all pass `deliver`, so
 *
 * - a paused process (SIGSTOP, a long GC pause, a frozen VM) runs nothing; whatever
 *   arrives meanwhile waits, and on resume it all runs in the order it arrived, with the
 *   clock jumped forward, exactly as a stopped process that carries on as if nothing
 *   happened;
 * - a crashed process runs nothing ever again: each start is a new incarnation, and
 *   everything addressed to an older incarnation is dropped.
 *
 * The clock may drift (a rate in parts per million) and be stepped; timers are set in the
 * process's own time and converted to true time with the drift rate, so a fast clock
 * fires its timers early in true time, as it would on a real machine.
 */
export class SimProcess {
  state: ProcessState = 'running';
  incarnation = 0;
  private backlog: (() => void)[] = [];
  /** Offset of this process's clock from true time at `anchorMs` of true time. */
  private offsetMs = 0;
  private driftPpm = 0;
  private anchorMs: number;
  readonly clock: Clock;
  readonly timers: Timers;
  /** Called when a delivered callback throws: a bug in the process's code, not in the simulator. */
  onError: ((err: unknown) => void) | null = null;
  /** Told when this process stops answering (paused or crashed): held long polls end then. */
  private readonly watchers = new Set<() => void>();
  private readonly timerLabel: string;

  constructor(
    readonly sim: Simulation,
    readonly id: string,
  ) {
    this.anchorMs = sim.nowMs;
    this.timerLabel = `${id} timer`;
    this.clock = { nowMs: () => this.localNowMs() };
    this.timers = {
      after: (delayMs, fn) => {
        const incarnation = this.incarnation;
        // As Node's setTimeout (which the production Timers use): a delay under 1 ms, or
        // not a number, is 1 ms. Rounding up keeps a timer from firing before its deadline
        // by this process's own clock; a fractional delay rounded down to 0 would let a
        // timer re-arm itself at one instant forever.
        const localDelay = delayMs >= 1 && delayMs <= 2_147_483_647 ? delayMs : 1;
        const trueDelay = Math.ceil(localDelay / (1 + this.driftPpm / 1e6));
        return this.sim.after(trueDelay, this.timerLabel, () => this.deliver(incarnation, fn));
      },
    };
  }

  /** The process's idea of now: true time plus its offset plus accumulated drift. */
  localNowMs(): number {
    const elapsed = this.sim.nowMs - this.anchorMs;
    return Math.floor(this.sim.nowMs + this.offsetMs + (elapsed * this.driftPpm) / 1e6);
  }

  /** Runs `fn` inside the process if that incarnation is still alive; holds it while paused. */
  deliver(incarnation: number, fn: () => void): void {
    if (incarnation !== this.incarnation || this.state === 'crashed') return;
    if (this.state === 'paused') {
      this.backlog.push(fn);
      return;
    }
    this.run(fn);
  }

  /** A callback bound to the current incarnation, for replies and notices. */
  bind(fn: () => void): () => void {
    const incarnation = this.incarnation;
    return () => this.deliver(incarnation, fn);
  }

  get alive(): boolean {
    return this.state !== 'crashed';
  }

  /** Calls `fn` the next times this process is paused or crashed, until the returned function is called. */
  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  private disturbed(): void {
    for (const fn of [...this.watchers]) fn();
  }

  pause(): void {
    if (this.state !== 'running') return;
    this.state = 'paused';
    this.disturbed();
  }

  resume(): void {
    if (this.state !== 'paused') return;
    this.state = 'running';
    const backlog = this.backlog;
    this.backlog = [];
    // Each held callback becomes its own event, in arrival order, so the promise
    // continuations of one settle before the next runs, as they would on the machine.
    const incarnation = this.incarnation;
    for (const fn of backlog) this.sim.after(0, `${this.id} resumed`, () => this.deliver(incarnation, fn));
  }

  crash(): void {
    this.state = 'crashed';
    this.backlog = [];
    this.incarnation++;
    this.disturbed();
  }

  /** A new incarnation after a crash: same identity, fresh memory. */
  restart(): void {
    this.state = 'running';
    this.backlog = [];
    this.incarnation++;
  }

  /** Sets the drift rate from now on, keeping the clock continuous. */
  setDrift(ppm: number): void {
    const local = this.localNowMs();
    this.anchorMs = this.sim.nowMs;
    this.offsetMs = local - this.sim.nowMs;
    this.driftPpm = ppm;
  }

  /** Steps the clock (NTP correction, an operator's mistake). */
  step(deltaMs: number): void {
    this.setDrift(this.driftPpm);
    this.offsetMs += deltaMs;
  }

  get skewMs(): number {
    return this.localNowMs() - this.sim.nowMs;
  }

  private run(fn: () => void): void {
    try {
      fn();
    } catch (err) {
      if (this.onError) this.onError(err);
      else throw err;
    }
  }
}
