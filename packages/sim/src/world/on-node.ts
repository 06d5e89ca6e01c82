import { errorFromJSON, FencelineError } from '@fenceline/core';
import { type SchedulerNode } from '@fenceline/core/engine';
import type { SchedulerHost } from './scheduler-host';

/** Runs `fn` on the node that runs on `host` when the request arrives; typed refusals cross the wire as the tRPC client rebuilds them. */
export async function onNode<T>(host: SchedulerHost, fn: (node: SchedulerNode) => Promise<T>): Promise<T> {
  const node = host.node;
  if (!node) throw new Error(`${host.nodeId} is starting`);
  try {
    return await fn(node);
  } catch (err) {
    if (err instanceof FencelineError) throw errorFromJSON(err.toJSON());
    throw err;
  }
}
