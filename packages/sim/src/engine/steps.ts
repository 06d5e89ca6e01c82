/**
 * Runs the simulation one event at a time so that every promise continuation queued by an
 * event has run before the next event starts: `step` is called only when the host's
 * microtask queue is empty, and is called again until it returns false.
 *
 * In Node the signal that the microtask queue is empty is exact and cheap: Node runs the
 * `process.nextTick` queue and the microtask queue in turns, and a tick queued from inside
 * a microtask runs only once the microtask queue has been drained to the end, including
 * every continuation queued while it drained. So after each step a microtask is queued
 * that queues the next step as a tick. Nothing in the simulator or in the code it runs
 * uses `process.nextTick` itself, so no other tick can slip in between. Every
 * `YIELD_EVERY_MS` of wall time the next step goes through `setImmediate` instead, so
 * that the host's own I/O (progress output, signals) is not starved; the microtask queue
 * is just as empty then.
 *
 * Elsewhere (a browser's Web Worker) each step is its own macrotask, a MessageChannel round
 * trip: the only point at which the microtask queue is known to be empty there. Both ways
 * run the same events in the same order, so a seed gives the same trace hash in either.
 */
const YIELD_EVERY_MS = 20;

interface NodeScheduling {
  nextTick: (fn: () => void) => void;
  setImmediate: (fn: () => void) => unknown;
}

function nodeScheduling(): NodeScheduling | null {
  const host = globalThis as { process?: { nextTick?: unknown }; setImmediate?: unknown };
  const nextTick = host.process?.nextTick;
  const immediate = host.setImmediate;
  if (typeof nextTick !== 'function' || typeof immediate !== 'function') return null;
  return { nextTick: nextTick as NodeScheduling['nextTick'], setImmediate: immediate as NodeScheduling['setImmediate'] };
}

/**
 * Calls `step` until it returns false; the first call is made at once (the caller's
 * pending continuations run after it, as they would after any event), each later one once
 * every continuation of the previous step has run. Rejects with whatever `step` throws.
 */
export function runSteps(step: () => boolean, options: { macrotaskPerStep?: boolean } = {}): Promise<void> {
  const node = options.macrotaskPerStep ? null : nodeScheduling();
  return node ? runOnTicks(step, node) : runOnMessages(step);
}

function runOnTicks(step: () => boolean, node: NodeScheduling): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    let deadline = performance.now() + YIELD_EVERY_MS;
    let steps = 0;
    const next = (): void => {
      let more: boolean;
      try {
        more = step();
      } catch (err) {
        reject(err);
        return;
      }
      if (more) queueMicrotask(afterDrain);
      else resolve();
    };
    // Runs among the step's continuations; what it queues runs once all of them have.
    const afterDrain = (): void => {
      if ((++steps & 1023) === 0 && performance.now() > deadline) node.setImmediate(resume);
      else node.nextTick(next);
    };
    const resume = (): void => {
      deadline = performance.now() + YIELD_EVERY_MS;
      next();
    };
    next();
  });
}

/**
 * The part of a MessageChannel's port this uses, as a browser has it and Node.js has it at
 * run time: Node's type for its global port lacks `onmessage`, and the node packages
 * type-check without the DOM library, so the port is described here.
 */
interface Port {
  onmessage: ((event: unknown) => void) | null;
  postMessage(message: unknown): void;
  close(): void;
}

function runOnMessages(step: () => boolean): Promise<void> {
  const Channel = (globalThis as unknown as { MessageChannel?: new () => { port1: Port; port2: Port } }).MessageChannel;
  return new Promise<void>((resolve, reject) => {
    let post: () => void;
    let close: () => void = () => undefined;
    if (Channel) {
      const channel = new Channel();
      post = () => channel.port2.postMessage(0);
      channel.port1.onmessage = () => next();
      close = () => {
        channel.port1.onmessage = null;
        channel.port1.close();
        channel.port2.close();
      };
    } else {
      post = () => void setTimeout(next, 0);
    }
    const next = (): void => {
      let more: boolean;
      try {
        more = step();
      } catch (err) {
        close();
        reject(err);
        return;
      }
      if (more) post();
      else {
        close();
        resolve();
      }
    };
    next();
  });
}
