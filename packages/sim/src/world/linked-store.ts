import { StoreUnavailableError } from '@fenceline/core';
import { type NoticeStore, type StoreNotice } from '@fenceline/core/store';
import type { SimProcess } from '../engine/process';
import { callLabels, callOver, type Link } from './link';

/**
 * The store as one process sees it: every call crosses that process's link (latency,
 * slow periods, cuts) and times out like a database client with a statement timeout;
 * notices arrive over the same link and are lost while it is cut, as a LISTEN connection
 * loses them when it drops. Everything else is the shared store itself.
 */
export function linkedStore<S extends NoticeStore>(
  store: S,
  link: Link,
  caller: SimProcess,
  timeoutMs: number,
  onCall?: (method: string) => void,
  /** Told of every answer the caller received: what the store acknowledged to it. */
  onReply?: (method: string, value: unknown) => void,
  /**
   * Told, around the store applying each call, when that call left the caller (and, with
   * null, when it is done), so an observer of the store's writes knows how old the
   * caller's view behind each write was.
   */
  onApply?: (method: string, sentAtMs: number | null) => void,
): S {
  // One wrapper per method, made on first use: the node calls the same few methods
  // millions of times, and a fresh wrapper (and label) per call is garbage.
  const wrappers = new Map<string, unknown>();
  // Calls stuck on a link that stickFor made stuck: only reconnect() ends them.
  const stuck = new Set<(err: Error) => void>();
  wrappers.set('reconnect', async () => {
    link.unstick();
    const waiting = [...stuck];
    stuck.clear();
    const incarnation = caller.incarnation;
    for (const fail of waiting) caller.deliver(incarnation, () => fail(new StoreUnavailableError('the store connection was replaced')));
  });
  return new Proxy(store, {
    get(target, prop, receiver) {
      if (typeof prop === 'string') {
        const wrapped = wrappers.get(prop);
        if (wrapped !== undefined) return wrapped;
      }
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function' || typeof prop !== 'string') return value;
      const wrapped = wrap(target, prop, value);
      wrappers.set(prop, wrapped);
      return wrapped;
    },
  });

  function wrap(target: S, prop: string, value: unknown): unknown {
    if (prop === 'close') return async () => undefined;
    if (prop === 'subscribe') {
      return async (listener: (notice: StoreNotice) => void) => {
        const incarnation = caller.incarnation;
        return target.subscribe((notice) => {
          if (link.cut) return;
          link.sim.post(link.delayMs(), `${caller.id} notice ${notice.kind}`, () => {
            if (!link.cut) caller.deliver(incarnation, () => listener(notice));
          });
        });
      };
    }
    const method = value as (...args: unknown[]) => Promise<unknown>;
    // A store call that gets no reply in time fails as a database client's does when its
    // connection is lost: the scheduling logic waits out such an outage.
    const labels = callLabels(`${caller.id}>store.${prop}`, storeUnavailable);
    return (...args: unknown[]) => {
      onCall?.(prop);
      const apply = (): Promise<unknown> => method.apply(target, args);
      let op = apply;
      if (onApply) {
        const sentAtMs = link.sim.nowMs;
        op = () => {
          onApply(prop, sentAtMs);
          try {
            return apply();
          } finally {
            onApply(prop, null);
          }
        };
      }
      if (prop === 'completeJobs' && link.refusingWrites) {
        // Answered at once, and never applied: a server in recovery refuses every write.
        return callOver(link, caller, null, labels, timeoutMs, () => Promise.reject(new StoreUnavailableError('cannot execute UPDATE in a read-only transaction')));
      }
      if (link.stuck) {
        // The statement reaches the store and may land; its answer never comes back.
        const land = op;
        link.sim.post(link.delayMs(), labels.arrive, () => void land().catch(() => undefined));
        return new Promise((_, reject) => stuck.add(reject));
      }
      const call = callOver(link, caller, null, labels, timeoutMs, op);
      return onReply ? call.then((value) => (onReply(prop, value), value)) : call;
    };
  }
}

function storeUnavailable(message: string): Error {
  return new StoreUnavailableError(message);
}
