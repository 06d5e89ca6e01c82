import { FencelineError } from '../errors';

/**
 * Sends one call to the node that delivered the job and, while none answers, to each
 * other node in turn. A typed refusal ends it at once: every node would say the same.
 * Rejects with the last transport error when no node answered.
 */
export async function viaThenOthers<T>(nodeCount: number, via: number, call: (node: number) => Promise<T>): Promise<T> {
  let last: unknown = new Error('no scheduler node to send to');
  for (let k = 0; k < nodeCount; k++) {
    try {
      return await call((via + k) % nodeCount);
    } catch (err) {
      if (err instanceof FencelineError) throw err;
      last = err;
    }
  }
  throw last;
}
