import type { Simulation } from '../engine/simulation';
import type { SimProcess } from '../engine/process';
import type { Rng } from '../engine/random';

/** A request that got no reply: the link was cut, or the far side died or stayed silent. */
export class LinkError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LinkError';
  }
}

export interface LinkOptions {
  /** One-way latency, before jitter. */
  latencyMs: number;
  /** Up to this much more, uniformly, per message. */
  jitterMs: number;
}

/**
 * A network path between two parties, one direction's delay drawn per message. Faults
 * make it slow (extra delay per message for a while) or cut it (every message in either
 * direction is lost for a while). A message lost on the way out never reaches the far
 * side; a reply lost on the way back means the far side acted but the caller never
 * learns it did, which is exactly the ambiguity fencing has to survive.
 */
export class Link {
  private cutUntilMs = 0;
  private slowUntilMs = 0;
  private slowExtraMs = 0;

  constructor(
    readonly sim: Simulation,
    readonly name: string,
    private readonly rng: Rng,
    private readonly options: LinkOptions,
  ) {}

  get cut(): boolean {
    return this.sim.nowMs < this.cutUntilMs;
  }

  get slow(): boolean {
    return this.sim.nowMs < this.slowUntilMs;
  }

  cutFor(durationMs: number): void {
    this.cutUntilMs = Math.max(this.cutUntilMs, this.sim.nowMs + durationMs);
  }

  slowFor(durationMs: number, extraMs: number): void {
    this.slowUntilMs = Math.max(this.slowUntilMs, this.sim.nowMs + durationMs);
    this.slowExtraMs = extraMs;
  }

  heal(): void {
    this.cutUntilMs = 0;
    this.slowUntilMs = 0;
  }

  /** The delay of one message sent now. */
  delayMs(): number {
    const jitter = this.options.jitterMs > 0 ? this.rng.next() * this.options.jitterMs : 0;
    return this.options.latencyMs + jitter + (this.slow ? this.slowExtraMs : 0);
  }
}

/**
 * Calls over a link, with a timeout. `op` runs on the far side when the request arrives
 * (inside `target` if the far side is a process, so a paused node answers late and a
 * crashed one never); the reply travels back and is delivered inside `caller`. A caller
 * whose request got no reply within `timeoutMs` sees a LinkError.
 */
export function callOver<T>(
  link: Link,
  caller: SimProcess,
  target: SimProcess | null,
  label: string,
  timeoutMs: number,
  op: () => Promise<T>,
): Promise<T> {
  const sim = link.sim;
  return new Promise<T>((resolve, reject) => {
    const incarnation = caller.incarnation;
    const inCaller = (fn: () => void) => () => caller.deliver(incarnation, fn);
    let settled = false;
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      cancelTimeout();
      fn();
    };
    const cancelTimeout = sim.after(timeoutMs, `${label} timeout`, inCaller(() => finish(() => reject(new LinkError(`${label}: no reply within ${timeoutMs} ms`)))));
    if (link.cut) return;
    sim.after(link.delayMs(), `${label} arrive`, () => {
      if (link.cut) return;
      if (target && !target.alive) {
        // Nobody listens on the far side: the connection is refused at once.
        reply(() => finish(() => reject(new LinkError(`${label}: connection refused (${target.id} is down)`))));
        return;
      }
      const run = (): void => {
        let result: Promise<T>;
        try {
          result = op();
        } catch (err) {
          result = Promise.reject(err);
        }
        result.then(
          (value) => reply(() => finish(() => resolve(value))),
          (err: unknown) => reply(() => finish(() => reject(err))),
        );
      };
      if (target) target.deliver(target.incarnation, run);
      else run();
    });
    const reply = (deliver: () => void): void => {
      if (link.cut) return;
      sim.after(link.delayMs(), `${label} reply`, () => {
        if (link.cut) return;
        inCaller(deliver)();
      });
    };
  });
}
