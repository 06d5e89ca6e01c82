import type { Tracing } from '@fenceline/core';

/**
 * The store writes on the hot path of every job: run creation and starts, grants,
 * renewals, results, promotions, finishes, the sweep and the event log. Each is one
 * batched statement, so a span per call shows what the batching costs and carries.
 */
export const HOT_PATH_WRITES = [
  'createScheduledRunsAcross',
  'startRunsAcross',
  'grantLeasesMany',
  'renewLeases',
  'completeJobs',
  'failJobs',
  'releaseJobs',
  'promoteJobsAcross',
  'markUpstreamFailedAcross',
  'markSkippedAcross',
  'finishRunsAcross',
  'sweepExpired',
  'appendEvents',
] as const;

/**
 * The store with a span around each hot-path write (HOT_PATH_WRITES), named
 * `store.<method>`, with the size of its batch when its first argument is a list. The
 * other methods pass through untouched. Only wrapped when tracing is on: with it off the
 * node talks to the store itself.
 */
export function tracedStore<S extends object>(store: S, tracing: Tracing): S {
  if (!tracing.enabled) return store;
  const traced = new Set<string | symbol>(HOT_PATH_WRITES);
  const bound = new Map<string | symbol, unknown>();
  return new Proxy(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      let fn = bound.get(key);
      if (fn === undefined) {
        const method = value as (...args: unknown[]) => unknown;
        fn = traced.has(key) ? spanned(tracing, `store.${String(key)}`, method.bind(target)) : method.bind(target);
        bound.set(key, fn);
      }
      return fn;
    },
  });
}

function spanned(tracing: Tracing, name: string, call: (...args: unknown[]) => unknown): (...args: unknown[]) => Promise<unknown> {
  return async (...args) => {
    const first = args[0];
    const span = tracing.start(name, { kind: 'client', attributes: { 'db.system.name': 'postgresql', ...(Array.isArray(first) ? { 'fenceline.batch.size': first.length } : {}) } });
    try {
      const out = await call(...args);
      span.end();
      return out;
    } catch (err) {
      span.end(err instanceof Error ? err.message : String(err));
      throw err;
    }
  };
}
