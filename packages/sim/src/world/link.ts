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
  /** Until then, replies to calls of these kinds are lost on the way back (see loseRepliesFor). */
  private replyLossUntilMs = 0;
  private replyLossKinds: readonly string[] = [];
  /** Replies lost to `loseRepliesFor`, for reports and tests. */
  repliesLost = 0;
  /** Until then, a store call sent over this link gets stuck (see stickFor). */
  private stuckUntilMs = 0;
  /** Until then, result writes sent over this link are refused at once (see refuseWritesFor). */
  private refuseWritesUntilMs = 0;
  /** Told when a cut starts: held long polls over this link end then. */
  private readonly watchers = new Set<() => void>();

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
    for (const fn of [...this.watchers]) fn();
  }

  /** Calls `fn` whenever a cut starts, until the returned function is called. */
  watch(fn: () => void): () => void {
    this.watchers.add(fn);
    return () => this.watchers.delete(fn);
  }

  slowFor(durationMs: number, extraMs: number): void {
    this.slowUntilMs = Math.max(this.slowUntilMs, this.sim.nowMs + durationMs);
    this.slowExtraMs = extraMs;
  }

  /**
   * For a while, the replies to calls of these kinds (`renew`, the last part of a call's
   * name) are lost on the way back while everything else gets through: the far side acted,
   * and the caller times out not knowing it did.
   */
  loseRepliesFor(durationMs: number, kinds: readonly string[]): void {
    this.replyLossUntilMs = Math.max(this.replyLossUntilMs, this.sim.nowMs + durationMs);
    this.replyLossKinds = kinds;
  }

  /** True (and counted) when a reply to a call of this kind sent now is lost. */
  losesReplyOf(kind: string): boolean {
    if (this.sim.nowMs >= this.replyLossUntilMs || !this.replyLossKinds.includes(kind)) return false;
    this.repliesLost++;
    return true;
  }

  /**
   * For a while, store calls sent over this link get stuck: each reaches the store (its
   * write may land) and its answer never comes, and no timeout of the link fails it, as a
   * statement on a connection whose server went away without a word. Such a call stays
   * stuck after the window, until its caller replaces its connections (linkedStore's
   * reconnect); only the caller's own deadline can free it.
   */
  stickFor(durationMs: number): void {
    this.stuckUntilMs = Math.max(this.stuckUntilMs, this.sim.nowMs + durationMs);
  }

  /**
   * For a while, the caller's result writes are refused at once, every other call answered
   * as usual: the connections of a pool left on a server in recovery after a failover,
   * which answer reads and refuse writes. Only new connections (reconnect) end it early.
   */
  refuseWritesFor(durationMs: number): void {
    this.refuseWritesUntilMs = Math.max(this.refuseWritesUntilMs, this.sim.nowMs + durationMs);
  }

  get refusingWrites(): boolean {
    return this.sim.nowMs < this.refuseWritesUntilMs;
  }

  get stuck(): boolean {
    return this.sim.nowMs < this.stuckUntilMs;
  }

  /** New connections: calls sent from now on are no longer stuck. */
  unstick(): void {
    this.stuckUntilMs = 0;
    this.refuseWritesUntilMs = 0;
  }

  heal(): void {
    this.stuckUntilMs = 0;
    this.refuseWritesUntilMs = 0;
    this.cutUntilMs = 0;
    this.slowUntilMs = 0;
    this.replyLossUntilMs = 0;
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
export function callOver<T>(link: Link, caller: SimProcess, target: SimProcess | null, labels: CallLabels, timeoutMs: number, op: () => Promise<T>): Promise<T> {
  return new Promise<T>((resolve, reject) => new Call(link, caller, target, labels, timeoutMs, op, resolve, reject).send());
}

/**
 * One call of `callOver`. Its steps are methods rather than closures made per call: a
 * run makes millions of calls, and each closure would cost an allocation (and, under the
 * TypeScript loader, a property definition that names it).
 */
class Call<T> {
  private settled = false;
  private cancelTimeout: (() => void) | null = null;
  private readonly incarnation: number;

  constructor(
    private readonly link: Link,
    private readonly caller: SimProcess,
    private readonly target: SimProcess | null,
    private readonly labels: CallLabels,
    private readonly timeoutMs: number,
    private readonly op: () => Promise<T>,
    private readonly resolve: (value: T) => void,
    private readonly reject: (err: unknown) => void,
  ) {
    this.incarnation = caller.incarnation;
  }

  send(): void {
    const sim = this.link.sim;
    this.cancelTimeout = sim.after(this.timeoutMs, this.labels.timeout, () => this.caller.deliver(this.incarnation, () => this.timedOut()));
    if (this.link.cut) return;
    sim.post(this.link.delayMs(), this.labels.arrive, () => this.arrive());
  }

  private arrive(): void {
    if (this.link.cut) return;
    const target = this.target;
    if (target && !target.alive) {
      // Nobody listens on the far side: the connection is refused at once.
      this.reply(false, this.labels.lost(`${this.labels.name}: connection refused (${target.id} is down)`));
      return;
    }
    if (target) target.deliver(target.incarnation, () => this.run());
    else this.run();
  }

  private run(): void {
    let result: Promise<T>;
    try {
      result = this.op();
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (value) => this.reply(true, value),
      (err: unknown) => this.reply(false, err),
    );
  }

  /** The far side's answer travels back; nobody waits for it once the caller gave up. */
  private reply(ok: boolean, value: unknown): void {
    if (this.settled || this.link.cut || this.link.losesReplyOf(this.labels.kind)) return;
    this.link.sim.post(this.link.delayMs(), this.labels.reply, () => {
      if (!this.link.cut) this.caller.deliver(this.incarnation, () => this.finish(ok, value));
    });
  }

  private timedOut(): void {
    this.finish(false, this.labels.lost(`${this.labels.name}: no reply within ${this.timeoutMs} ms`));
  }

  private finish(ok: boolean, value: unknown): void {
    if (this.settled) return;
    this.settled = true;
    this.cancelTimeout?.();
    if (ok) this.resolve(value as T);
    else this.reject(value);
  }
}

/** The labels of one kind of call's events: `<call> arrive`, `<call> reply` and so on. */
export interface CallLabels {
  name: string;
  /** The call's kind, the part of its name after the last dot (`renew` of `w-1>node-0.renew`). */
  kind: string;
  arrive: string;
  reply: string;
  timeout: string;
  hangUp: string;
  unhold: string;
  /** The error a caller sees when the far side is down or its reply does not come in time. */
  lost: (message: string) => Error;
}

/**
 * A worker or a node makes the same few calls over and over, so each caller builds the
 * labels of each kind of call once, here, and passes them with every call.
 */
export function callLabels(name: string, lost: (message: string) => Error = (message) => new LinkError(message)): CallLabels {
  return {
    name,
    kind: name.slice(name.lastIndexOf('.') + 1),
    arrive: `${name} arrive`,
    reply: `${name} reply`,
    timeout: `${name} timeout`,
    hangUp: `${name} hang-up`,
    unhold: `${name} unhold`,
    lost,
  };
}

/**
 * The far side's view of a held call: how it learns that the client hung up. As a node's
 * HTTP handler does, it runs `fn` at once if the close came before the handler asked (the
 * handler awaits a session check before it waits).
 */
export interface HangUp {
  onCancel(fn: () => void): void;
}

/** A long poll held open until it is answered, see `holdOver`. */
export interface HeldCall<T> {
  readonly promise: Promise<T>;
  /**
   * The client hangs up (an aborted fetch): the promise rejects with `reason` at once, and
   * the far side learns of it when the close arrives over the link.
   */
  abort(reason: Error): void;
  /**
   * Ends the hold at the next cycle boundary, where the production client would have
   * polled again anyway (its free slots changed since this poll was sent).
   */
  refresh(): void;
}

export interface HoldOptions {
  /** The production long-poll wait: the far side answers empty this long after a poll arrives, and the client polls again. */
  cycleMs: number;
  /** The client's timeout beyond the wait (its RPC timeout). */
  timeoutMs: number;
}

/**
 * A long poll, held open until it is answered. In production a worker's poll is answered
 * empty after `cycleMs` and the worker polls again at once, over and over, while it is
 * idle: each round trip changes nothing a node decides on (the worker was waiting before
 * and is waiting after, with the same free slots). Simulated literally, ten thousand idle
 * workers on three nodes cost thousands of events per virtual second, so here the poll
 * stays open, and the cycle is only played out when it would make a difference:
 *
 * - when a crashed caller's machine closes the connection, the close reaches the far side
 *   a link delay later and ends the wait there (unless the link is cut);
 * - when something else disturbs the call (a cut of the link, the far side paused or
 *   crashed, the caller paused) or the client asks for it (`refresh`), the far side answers empty at the
 *   next cycle boundary counted from the poll's arrival, exactly as its own timer would
 *   have, and the answer travels back like any reply (lost on a cut link, held by a paused
 *   caller, dropped by a dead one);
 * - the client's timeout is armed only once the call may fail: when a message of it is
 *   lost, or at such a boundary. It fires where the production client's would: the
 *   client's wait plus `timeoutMs` after the poll it would have sent last.
 *
 * `op` runs on the far side when the request arrives, with a `HangUp` through which it
 * learns that the client went away; `target` is the far side's process.
 */
export function holdOver<T>(link: Link, caller: SimProcess, target: SimProcess, labels: CallLabels, options: HoldOptions, op: (hangUp: HangUp) => Promise<T>): HeldCall<T> {
  const sim = link.sim;
  const label = labels.name;
  const { cycleMs, timeoutMs } = options;
  const callerIncarnation = caller.incarnation;
  const sentAtMs = sim.nowMs;
  let resolveCall!: (value: T) => void;
  let rejectCall!: (err: unknown) => void;
  const promise = new Promise<T>((resolve, reject) => {
    resolveCall = resolve;
    rejectCall = reject;
  });
  /** The client has its answer, or gave up (timeout, hang-up). */
  let settled = false;
  let hungUp = false;
  let cancelTimeout: (() => void) | null = null;
  /** Set once the request is being served: when the far side started waiting, and in which incarnation. */
  let servedAtMs = -1;
  let targetIncarnation = -1;
  let cancelOnFarSide: (() => void) | null = null;
  /** The close reached the far side before its handler asked to hear of it (see HangUp). */
  let closeArrived = false;
  let farSideAnswers = false;
  const unwatch: (() => void)[] = [];
  /**
   * The caller is watched apart from the link and the far side: a disturbance ends the
   * watch of those two (the far side's answer is already due at the boundary), but until
   * that answer the production client still holds the connection open, and its crash
   * closes it there and then.
   */
  let unwatchCaller: (() => void) | null = null;

  const stopWatching = (): void => {
    for (const u of unwatch.splice(0, unwatch.length)) u();
    unwatchCaller?.();
    unwatchCaller = null;
  };
  const settle = (fn: () => void): void => {
    if (settled) return;
    settled = true;
    cancelTimeout?.();
    stopWatching();
    fn();
  };
  /** Arms the client's timeout once: the poll it sent last (at `lastPollAtMs`), plus the wait, plus the RPC timeout. */
  const armTimeout = (lastPollAtMs: number): void => {
    if (settled || cancelTimeout) return;
    cancelTimeout = sim.at(lastPollAtMs + cycleMs + timeoutMs, labels.timeout, () =>
      caller.deliver(callerIncarnation, () => settle(() => rejectCall(new LinkError(`${label}: no reply within ${cycleMs + timeoutMs} ms`)))),
    );
  };
  /** The last poll the production client would have sent by `atMs`, counting cycles from the first. */
  const lastPollBefore = (atMs: number): number => sentAtMs + Math.floor((atMs - sentAtMs) / cycleMs) * cycleMs;
  /**
   * The far side answers empty at the next boundary of its own wait, as its timer would
   * have; from then on the client may time out like any caller.
   */
  const answerAtBoundary = (andTimeout: boolean): void => {
    if (farSideAnswers || servedAtMs < 0) return;
    farSideAnswers = true;
    for (const u of unwatch.splice(0, unwatch.length)) u();
    const cycles = Math.max(1, Math.ceil((sim.nowMs - servedAtMs) / cycleMs));
    const boundaryMs = servedAtMs + cycles * cycleMs;
    sim.at(boundaryMs, labels.unhold, () => {
      if (andTimeout) armTimeout(boundaryMs);
      if (cancelOnFarSide) target.deliver(targetIncarnation, cancelOnFarSide);
    });
  };
  const disturbed = (): void => {
    if (!settled) answerAtBoundary(true);
  };
  const reply = (deliver: () => void): void => {
    // Nobody listens for the answer of a call the client hung up on.
    if (settled) return;
    if (link.cut) {
      armTimeout(lastPollBefore(sim.nowMs));
      return;
    }
    sim.post(link.delayMs(), labels.reply, () => {
      if (link.cut) armTimeout(lastPollBefore(sim.nowMs));
      else caller.deliver(callerIncarnation, deliver);
    });
  };
  /** The client's close reaches the far side: only this call's wait ends. */
  const hangUpArrives = (): void => {
    if (link.cut) answerAtBoundary(false);
    else if (cancelOnFarSide) target.deliver(targetIncarnation, cancelOnFarSide);
    else closeArrived = true;
  };
  /**
   * The caller's process changed state. A crashed one's connections are closed by its
   * machine, so the close reaches the far side one link delay later and ends this wait
   * there, as a production node's poll ends when its request's socket closes; a paused
   * caller keeps them open, and a cut link carries no close (the wait runs to its boundary).
   */
  const callerChanged = (): void => {
    if (caller.incarnation === callerIncarnation || settled || link.cut) {
      disturbed();
      return;
    }
    stopWatching();
    sim.post(link.delayMs(), labels.hangUp, hangUpArrives);
  };
  const serve = (): void => {
    servedAtMs = sim.nowMs;
    targetIncarnation = target.incarnation;
    // A request held up by a paused far side: the production client's timeout (armed at
    // arrival) stands if it was already late by more than the RPC timeout when served.
    if (cancelTimeout && sim.nowMs - sentAtMs <= timeoutMs) {
      cancelTimeout();
      cancelTimeout = null;
    }
    let result: Promise<T>;
    try {
      result = op({
        onCancel: (fn) => {
          cancelOnFarSide = fn;
          if (closeArrived) fn();
        },
      });
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (value) => reply(() => settle(() => resolveCall(value))),
      (err: unknown) => reply(() => settle(() => rejectCall(err))),
    );
    // The client closed the connection before the request was served (it hung up, or its
    // process died since sending it); the close follows the request.
    if (hungUp || (caller.incarnation !== callerIncarnation && !link.cut)) hangUpArrives();
    else if (!settled) {
      unwatch.push(link.watch(disturbed), target.watch(disturbed));
      unwatchCaller = caller.watch(callerChanged);
    }
  };

  if (link.cut) armTimeout(sentAtMs);
  else {
    sim.post(link.delayMs(), labels.arrive, () => {
      if (link.cut) {
        armTimeout(sentAtMs);
        return;
      }
      if (!target.alive) {
        // Nobody listens on the far side: the connection is refused at once.
        reply(() => settle(() => rejectCall(new LinkError(`${label}: connection refused (${target.id} is down)`))));
        return;
      }
      if (target.state === 'paused') armTimeout(sentAtMs);
      target.deliver(target.incarnation, serve);
    });
  }

  return {
    promise,
    abort: (reason) => {
      if (settled) return;
      hungUp = true;
      settle(() => rejectCall(reason));
      // Before the request is served, the close waits behind it (see serve).
      if (servedAtMs < 0) return;
      if (link.cut) answerAtBoundary(false);
      else sim.post(link.delayMs(), labels.hangUp, hangUpArrives);
    },
    refresh: disturbed,
  };
}
